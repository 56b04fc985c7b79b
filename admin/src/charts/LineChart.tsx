/** One series of a line chart: its points in order, x as a time. */
export interface Series {
  label: string;
  points: { at: number; value: number }[];
}

const WIDTH = 560;
const HEIGHT = 160;
const PAD = { left: 48, right: 12, top: 10, bottom: 22 };
const COLORS = ['var(--accent)', 'var(--danger)', '#2f9e44', '#b07d00', '#7048e8'];

function format(value: number): string {
  if (Math.abs(value) >= 1000) return `${(value / 1000).toFixed(1)}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 2 : 1);
}

/**
 * A small SVG line chart (no library: the console only draws a few series of at most a few
 * hundred points). Screen readers get the latest values as text; a table below lists them.
 */
export function LineChart({ title, series, unit = '' }: { title: string; series: Series[]; unit?: string }) {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0)
    return (
      <figure class="chart">
        <figcaption>{title}</figcaption>
        <p class="muted">No data yet.</p>
      </figure>
    );
  const minAt = Math.min(...all.map((p) => p.at));
  const maxAt = Math.max(...all.map((p) => p.at));
  const top = Math.max(...all.map((p) => p.value), 0) || 1;
  const x = (at: number) =>
    PAD.left + (maxAt === minAt ? 0.5 : (at - minAt) / (maxAt - minAt)) * (WIDTH - PAD.left - PAD.right);
  const y = (value: number) => PAD.top + (1 - value / top) * (HEIGHT - PAD.top - PAD.bottom);
  const latest = series
    .map((s) => (s.points.length > 0 ? `${s.label} ${format(s.points.at(-1)!.value)}${unit}` : ''))
    .filter(Boolean)
    .join(', ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${title}; latest: ${latest}`}>
        <line x1={PAD.left} y1={y(0)} x2={WIDTH - PAD.right} y2={y(0)} class="axis" />
        <line x1={PAD.left} y1={y(top)} x2={WIDTH - PAD.right} y2={y(top)} class="grid" />
        <text x={PAD.left - 6} y={y(top) + 4} text-anchor="end" class="tick">
          {format(top)}
          {unit}
        </text>
        <text x={PAD.left - 6} y={y(0) + 4} text-anchor="end" class="tick">
          0
        </text>
        <text x={PAD.left} y={HEIGHT - 4} class="tick">
          {new Date(minAt).toLocaleTimeString()}
        </text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 4} text-anchor="end" class="tick">
          {new Date(maxAt).toLocaleTimeString()}
        </text>
        {series.map((s, index) => (
          <g key={s.label} stroke={COLORS[index % COLORS.length]} fill={COLORS[index % COLORS.length]}>
            <polyline
              fill="none"
              stroke-width="2"
              points={s.points.map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ')}
            />
            {/* The latest point stands out (and a single point is visible at all). */}
            {s.points.length > 0 && <circle cx={x(s.points.at(-1)!.at)} cy={y(s.points.at(-1)!.value)} r="3" />}
          </g>
        ))}
      </svg>
      {series.length > 1 && (
        <ul class="legend">
          {series.map((s, index) => (
            <li key={s.label}>
              <span class="swatch" style={{ background: COLORS[index % COLORS.length] }} aria-hidden="true" />
              {s.label}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
