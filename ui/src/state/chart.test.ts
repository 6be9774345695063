import { describe, expect, it } from 'vitest';
import type { TimelineDay } from '../types';
import { chartGeometry, fillDays, niceMax, type ChartBox } from './chart';

const box: ChartBox = { width: 140, height: 120, margin: { top: 10, right: 20, bottom: 10, left: 20 } };
const day = (d: string, fr: number | null, rr: number | null, codes: Record<string, number> = {}): TimelineDay => ({ day: d, calls: 1, fallback_rate: fr, repair_success_rate: rr, error_codes: codes });

describe('chart geometry', () => {
  it('fills missing days so the x axis is time, not index', () => {
    const days = fillDays([day('2026-11-03', 0, null), day('2026-11-01', 0.5, 1)]);
    expect(days.map((d) => d.day)).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(days[1]).toMatchObject({ calls: 0, fallback_rate: null });
  });
  it('places rate points on a 0–100 % axis and breaks the line at days without data', () => {
    const g = chartGeometry([day('2026-11-01', 0.5, 1), day('2026-11-03', 0, null)], box);
    // plot: x 20..120 (3 bands of 33.3), y 110 (0 %) .. 10 (100 %)
    expect(g.xs.map((x) => Math.round(x))).toEqual([37, 70, 103]);
    expect(g.fallback.points.map((p) => p.y)).toEqual([60, 110]);
    expect(g.fallback.path).toBe('M36.7,60.0M103.3,110.0'); // no L across the empty day
    expect(g.repair.points).toHaveLength(1);
    expect(g.repair.points[0].y).toBe(10);
  });
  it('stacks error-code bars per day, scaled to a nice maximum, most frequent code first', () => {
    const g = chartGeometry([day('2026-11-01', null, null, { ERR_A: 1, ERR_B: 3 }), day('2026-11-02', null, null, { ERR_A: 1 })], box);
    expect(g.maxCount).toBe(5);
    expect(g.codes).toEqual([{ code: 'ERR_B', total: 3, colour: 0 }, { code: 'ERR_A', total: 2, colour: 1 }]);
    const d1 = g.bars.filter((b) => b.day === '2026-11-01');
    expect(d1.map((b) => b.code)).toEqual(['ERR_B', 'ERR_A']);
    expect(d1[0].h).toBe(60); // 3/5 of 100
    expect(d1[0].y + d1[0].h).toBe(110); // sits on the axis
    expect(d1[1].y + d1[1].h).toBe(d1[0].y); // stacked on top
  });
  it('handles an empty timeline', () => {
    const g = chartGeometry([], box);
    expect(g.bars).toEqual([]);
    expect(g.fallback.path).toBe('');
    expect(niceMax(0)).toBe(1);
    expect(niceMax(7)).toBe(10);
    expect(niceMax(11)).toBe(20);
  });
});
