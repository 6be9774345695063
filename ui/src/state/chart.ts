// Report timeline → SVG geometry: per-day fallback-rate and repair-success-rate lines (0–100 %,
// left axis) over stacked error-code bars (counts, right axis). Pure, so it is unit-tested.
import type { TimelineDay } from '../types';

export interface ChartBox {
  width: number;
  height: number;
  margin: { top: number; right: number; bottom: number; left: number };
}

// The side margins hold each axis's ticks and its rotated title.
export const DEFAULT_BOX: ChartBox = { width: 720, height: 260, margin: { top: 16, right: 60, bottom: 36, left: 60 } };

export interface Bar {
  day: string;
  code: string;
  count: number;
  x: number;
  y: number;
  w: number;
  h: number;
  colour: number; // index into the palette
}

export interface Point {
  day: string;
  x: number;
  y: number;
  value: number;
}

export interface ChartGeometry {
  days: string[];
  xs: number[];
  bars: Bar[];
  codes: { code: string; total: number; colour: number }[];
  fallback: { path: string; points: Point[] };
  repair: { path: string; points: Point[] };
  maxCount: number;
  countTicks: { value: number; y: number }[];
  rateTicks: { value: number; y: number }[];
  labelEvery: number;
  plot: { x0: number; x1: number; y0: number; y1: number };
}

const DAY_MS = 86_400_000;

/** The days from the first to the last, one entry each; a day without calls has null rates. */
export function fillDays(timeline: TimelineDay[]): TimelineDay[] {
  const sorted = [...timeline].sort((a, b) => a.day.localeCompare(b.day));
  if (sorted.length < 2) return sorted;
  const byDay = new Map(sorted.map((d) => [d.day, d]));
  const first = Date.parse(`${sorted[0].day}T00:00:00Z`);
  const last = Date.parse(`${sorted[sorted.length - 1].day}T00:00:00Z`);
  if (!Number.isFinite(first) || !Number.isFinite(last) || (last - first) / DAY_MS > 400) return sorted;
  const out: TimelineDay[] = [];
  for (let t = first; t <= last; t += DAY_MS) {
    const day = new Date(t).toISOString().slice(0, 10);
    out.push(byDay.get(day) ?? { day, calls: 0, fallback_rate: null, repair_success_rate: null, error_codes: {} });
  }
  return out;
}

/** Round a maximum up to a "nice" axis top: 1, 2, 5 × 10^n. */
export function niceMax(n: number): number {
  if (n <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

function linePath(points: (Point | null)[]): string {
  let d = '';
  let pen = false;
  for (const p of points) {
    if (!p) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`;
    pen = true;
  }
  return d;
}

export function chartGeometry(timeline: TimelineDay[], box: ChartBox = DEFAULT_BOX): ChartGeometry {
  const days = fillDays(timeline);
  const { width, height, margin } = box;
  const x0 = margin.left;
  const x1 = width - margin.right;
  const y0 = height - margin.bottom; // bottom
  const y1 = margin.top; // top
  const n = Math.max(1, days.length);
  const band = (x1 - x0) / n;
  const xs = days.map((_, i) => x0 + band * (i + 0.5));

  const totals = new Map<string, number>();
  for (const d of days) for (const [c, k] of Object.entries(d.error_codes)) totals.set(c, (totals.get(c) ?? 0) + k);
  const codes = [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([code, total], i) => ({ code, total, colour: i }));
  const colourOf = new Map(codes.map((c) => [c.code, c.colour]));

  const dayTotals = days.map((d) => Object.values(d.error_codes).reduce((a, b) => a + b, 0));
  const maxCount = niceMax(Math.max(0, ...dayTotals));
  const barW = Math.max(2, Math.min(28, band * 0.6));
  const bars: Bar[] = [];
  days.forEach((d, i) => {
    let top = y0;
    for (const { code } of codes) {
      const count = d.error_codes[code] ?? 0;
      if (!count) continue;
      const h = ((y0 - y1) * count) / maxCount;
      top -= h;
      bars.push({ day: d.day, code, count, x: xs[i] - barW / 2, y: top, w: barW, h, colour: colourOf.get(code)! });
    }
  });

  const rateY = (v: number) => y0 - (y0 - y1) * Math.max(0, Math.min(1, v));
  const series = (key: 'fallback_rate' | 'repair_success_rate') => {
    const pts = days.map((d, i) => (d[key] === null || d[key] === undefined ? null : { day: d.day, x: xs[i], y: rateY(d[key] as number), value: d[key] as number }));
    return { path: linePath(pts), points: pts.filter((p): p is Point => p !== null) };
  };

  const countTicks = [0, 0.5, 1].map((f) => ({ value: Math.round(maxCount * f * 10) / 10, y: y0 - (y0 - y1) * f }));
  const rateTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => ({ value: f, y: rateY(f) }));
  return {
    days: days.map((d) => d.day),
    xs,
    bars,
    codes,
    fallback: series('fallback_rate'),
    repair: series('repair_success_rate'),
    maxCount,
    countTicks,
    rateTicks,
    labelEvery: Math.max(1, Math.ceil(n / 8)),
    plot: { x0, x1, y0, y1 },
  };
}
