import { readFileSync } from 'node:fs';

/** Clock ticks a second of /proc's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds a process has used (user and system, all its threads), from /proc; undefined where
 * there is no /proc. Throughput waits on the disk too; CPU per request is what code changes move.
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    // The command name may hold spaces: the fields counted from the closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * Runs a load (synchronously: the load generator is another process) and answers its result with
 * the CPU time process `pid` spent per request of it, in µs, when /proc tells.
 */
export function withCpuPerRequest<R extends { total: number }>(
  pid: number | undefined,
  run: () => R,
  core?: number,
): R & { cpuMicros?: number; coreShares?: CoreShares } {
  const before = cpuSeconds(pid);
  const coreBefore = core === undefined ? undefined : coreTicks(core);
  const result = run();
  const after = cpuSeconds(pid);
  const coreAfter = core === undefined ? undefined : coreTicks(core);
  const coreShares = coreBefore && coreAfter ? sharesBetween(coreBefore, coreAfter) : undefined;
  if (before === undefined || after === undefined || result.total === 0)
    return coreShares ? { ...result, coreShares } : result;
  return { ...result, cpuMicros: ((after - before) * 1e6) / result.total, ...(coreShares ? { coreShares } : {}) };
}

/**
 * How a core spent a while: running anything, waiting for the disk, idle. A server's core that
 * waits or idles under a closed-loop load is one whose clients all wait for it (a group commit's
 * fsync, say), not one short of CPU.
 */
export interface CoreShares {
  busy: number;
  ioWait: number;
  idle: number;
}

function sharesBetween(
  before: { busy: number; ioWait: number; total: number },
  after: { busy: number; ioWait: number; total: number },
): CoreShares | undefined {
  const total = after.total - before.total;
  if (total <= 0) return undefined;
  const busy = (after.busy - before.busy) / total;
  const ioWait = (after.ioWait - before.ioWait) / total;
  return { busy, ioWait, idle: Math.max(0, 1 - busy - ioWait) };
}

/**
 * Clock ticks of one core so far, from /proc/stat: busy, waiting for the disk with nothing else to
 * run (iowait), and all; undefined where there is none.
 */
export function coreTicks(core: number): { busy: number; ioWait: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`cpu${core} `));
    if (!line) return undefined;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number);
    const busy = user + nice + system + irq + softirq + steal;
    return { busy, ioWait: iowait, total: busy + idle + iowait };
  } catch {
    return undefined;
  }
}
