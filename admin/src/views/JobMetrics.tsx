import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { LineChart, type Series } from '../charts/LineChart.js';
import type { ListPage } from '../model.js';
import { Problem } from './Problem.js';

/** Snapshot points charted at most (the newest). */
const POINTS = 200;

/** The metric points a job's runs returned (GET /jobSnapshots?jobId=), one chart per metric, one line per series. */
export function JobMetrics({ jobId }: { jobId: string }) {
  const [charts, setCharts] = useState<{ metric: string; series: Series[] }[] | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  useEffect(() => {
    api<ListPage>('GET', `/jobSnapshots${query({ jobId, sort: '-capturedAt', limit: POINTS })}`)
      .then((page) => {
        const byMetric = new Map<string, Map<string, Series>>();
        for (const point of [...page.items].reverse()) {
          const metric = String(point.metric);
          const lines = byMetric.get(metric) ?? new Map<string, Series>();
          byMetric.set(metric, lines);
          const label = String(point.series ?? metric);
          const line = lines.get(label) ?? { label, points: [] };
          lines.set(label, line);
          line.points.push({ at: Date.parse(String(point.capturedAt)), value: Number(point.value) });
        }
        setCharts([...byMetric].map(([metric, lines]) => ({ metric, series: [...lines.values()] })));
      })
      .catch(setFailure);
  }, [jobId]);
  if (failure) return <Problem error={failure} />;
  if (!charts) return null;
  return (
    <section aria-labelledby="metrics-title">
      <h2 id="metrics-title">Metrics from its runs</h2>
      {charts.length === 0 ? (
        <p class="muted">The runs of this job returned no metric points yet.</p>
      ) : (
        <div class="charts">
          {charts.map((chart) => (
            <LineChart key={chart.metric} title={chart.metric} series={chart.series} />
          ))}
        </div>
      )}
    </section>
  );
}
