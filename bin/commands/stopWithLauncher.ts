/** How often the launcher is looked for. */
const CHECK_MS = 500;

/** Whether a process is still there (signal 0 only asks); EPERM means it is, but not ours. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Started through npm (`npx entigen serve`, `npm start`), the server is npm's child, and a
 * supervisor (systemd, Docker, a process manager) signals the process it started: npm. npm does
 * not always pass the signal on, which would leave the server an orphan still answering on its
 * port. So when npm launched it, the server watches that launcher and stops, as on SIGTERM, once
 * it is gone. Started any other way (node, a shell, nohup) it watches nothing.
 */
export function stopWithLauncher(
  stop: (reason: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  launcher: number = process.ppid,
): NodeJS.Timeout | undefined {
  if (!env.npm_command && !env.npm_lifecycle_event) return undefined;
  if (launcher <= 1) return undefined;
  const timer = setInterval(() => {
    if (alive(launcher)) return;
    clearInterval(timer);
    stop('the npm process that started this server exited');
  }, CHECK_MS);
  timer.unref();
  return timer;
}
