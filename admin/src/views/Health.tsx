import { useEffect, useRef, useState } from 'preact/hooks';
import { api, apiText } from '../api.js';
import type { HealthReport } from '../apiTypes.js';
import { LineChart } from '../charts/LineChart.js';
import { isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { NotAllowed, Problem } from './Problem.js';

type HealthAnswer = HealthReport;
interface Sample {
  at: number;
  requests: number;
  errors: number;
  durationSum?: number;
  durationCount?: number;
}

/** Samples kept: five minutes at one every five seconds. */
const SAMPLES = 60;
export const HEALTH_POLL_MS = 5000;
const MB = 1024 * 1024;

/** The sums of every series of a Prometheus histogram's _sum and _count in /api/metrics. */
export function durationTotals(text: string): { sum: number; count: number } | undefined {
  let sum = 0;
  let count = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    const match = /^entigen_http_request_duration_seconds_(sum|count)(?:\{[^}]*\})? ([0-9.eE+-]+)$/.exec(line);
    if (!match) continue;
    seen = true;
    if (match[1] === 'sum') sum += Number(match[2]);
    else count += Number(match[2]);
  }
  return seen ? { sum, count } : undefined;
}

/** /admin/health (admins): /api/health's statistics, with request-rate and latency charts sampled while open. */
export function Health({ session }: { session: Session }) {
  const [health, setHealth] = useState<HealthAnswer | undefined>(undefined);
  const [samples, setSamples] = useState<Sample[]>([]);
  const [failure, setFailure] = useState<unknown>(undefined);
  const [latencyNote, setLatencyNote] = useState<string | undefined>(undefined);
  const kept = useRef<Sample[]>([]);
  const admin = isAdmin(session.me);

  useEffect(() => {
    if (!admin) return;
    let stopped = false;
    const sample = async () => {
      if (document.hidden) return;
      try {
        const answer = await api<HealthAnswer>('GET', '/api/health', { absolute: true });
        const metrics = await apiText('/api/metrics');
        const totals = metrics === undefined ? undefined : durationTotals(metrics);
        setLatencyNote(
          metrics === undefined ? 'Latency needs /api/metrics, which this server keeps behind a token.' : undefined,
        );
        if (stopped) return;
        setHealth(answer);
        setFailure(undefined);
        kept.current = [
          ...kept.current,
          {
            at: Date.now(),
            requests: answer.requests?.total ?? 0,
            errors: answer.requests?.errors ?? 0,
            durationSum: totals?.sum,
            durationCount: totals?.count,
          },
        ].slice(-(SAMPLES + 1));
        setSamples(kept.current);
      } catch (error) {
        if (!stopped) setFailure(error);
      }
    };
    void sample();
    const timer = setInterval(() => void sample(), HEALTH_POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [admin]);
  if (!admin) return <NotAllowed what="see the server's health statistics (administrators only)" />;

  // Rates between consecutive samples (the health requests themselves included).
  const pairs = samples.slice(1).map((sample, index) => [samples[index], sample] as const);
  const rate = pairs.map(([a, b]) => ({ at: b.at, value: ((b.requests - a.requests) * 1000) / (b.at - a.at) }));
  const errorRate = pairs.map(([a, b]) => ({ at: b.at, value: ((b.errors - a.errors) * 1000) / (b.at - a.at) }));
  const latency = pairs.flatMap(([a, b]) =>
    a.durationSum !== undefined && b.durationSum !== undefined && b.durationCount! > a.durationCount!
      ? [{ at: b.at, value: ((b.durationSum - a.durationSum) / (b.durationCount! - a.durationCount!)) * 1000 }]
      : [],
  );
  return (
    <section aria-labelledby="health-title">
      <h1 id="health-title">Health</h1>
      {failure !== undefined && <Problem error={failure} />}
      {health && (
        <>
          <dl class="cards stats">
            <div>
              <dt>Status</dt>
              <dd data-testid="health-status">{health.status}</dd>
            </div>
            <div>
              <dt>Up for</dt>
              <dd>{Math.round((health.uptime ?? 0) / 60)} min</dd>
            </div>
            <div>
              <dt>Requests</dt>
              <dd data-testid="health-requests">{health.requests?.total ?? '—'}</dd>
            </div>
            <div>
              <dt>Error rate</dt>
              <dd>{((health.requests?.errorRate ?? 0) * 100).toFixed(2)} %</dd>
            </div>
            <div>
              <dt>Memory (RSS)</dt>
              <dd>{health.memory ? `${Math.round(health.memory.rss / MB)} MB` : '—'}</dd>
            </div>
            <div>
              <dt>Database</dt>
              <dd>
                {health.database?.status ?? '—'} {health.database?.kind && `(${health.database.kind})`}
                {health.database?.latencyMs !== undefined && `, ${health.database.latencyMs} ms`}
              </dd>
            </div>
          </dl>
          <div class="charts">
            <LineChart
              title="Requests per second"
              series={[
                { label: 'all', points: rate },
                { label: 'server errors', points: errorRate },
              ]}
            />
            <LineChart title="Average latency" unit=" ms" series={[{ label: 'latency', points: latency }]} />
          </div>
          {latencyNote && <p class="muted">{latencyNote}</p>}
          <p class="muted">Sampled every {HEALTH_POLL_MS / 1000} s while this page is open.</p>
          <h2>Slowest endpoints</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Average</th>
                  <th scope="col">Slowest</th>
                </tr>
              </thead>
              <tbody>
                {(health.slowestEndpoints ?? []).map((e) => (
                  <tr key={e.endpoint}>
                    <td>
                      <code>{e.endpoint}</code>
                    </td>
                    <td>{e.count}</td>
                    <td>{e.avgMs} ms</td>
                    <td>{e.maxMs} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
