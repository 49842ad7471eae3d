import { describe, expect, it } from 'vitest';
import { cohortPositions, generateSeed } from '../queue/fairness.js';
import { positionHistogram } from './fairness-report.js';

describe('positionHistogram', () => {
  it('puts every account in the bucket of its position, split by join half', () => {
    const positions = [
      { joinIndex: 0, position: 3 },
      { joinIndex: 1, position: 1 },
      { joinIndex: 2, position: 4 },
      { joinIndex: 3, position: 2 },
    ];
    const h = positionHistogram(positions, 4, 2);
    expect(h.buckets).toEqual([
      { from: 1, to: 2, earlyJoiners: 1, lateJoiners: 1 },
      { from: 3, to: 4, earlyJoiners: 1, lateJoiners: 1 },
    ]);
    expect(h).toMatchObject({ cohortSize: 4, accounts: 4, expectedMeanPosition: 2.5 });
  });

  it('a seeded draw of 5,000 spreads early and late joiners evenly: every join decile near the middle', async () => {
    const n = 5000;
    const slots = await cohortPositions(generateSeed(), n);
    const h = positionHistogram(
      Array.from(slots, (s, joinIndex) => ({ joinIndex, position: s + 1 })),
      n,
    );
    expect(h.buckets).toHaveLength(20);
    expect(h.buckets.reduce((a, b) => a + b.earlyJoiners + b.lateJoiners, 0)).toBe(n);
    for (const d of h.meanPositionByJoinDecile) expect(Math.abs(d.meanPosition - h.expectedMeanPosition)).toBeLessThan(n * 0.06);
  });

  it('join order itself (FIFO) shows as early joiners all at the front', () => {
    const h = positionHistogram(
      Array.from({ length: 100 }, (_, i) => ({ joinIndex: i, position: i + 1 })),
      100,
      4,
    );
    expect(h.buckets.map((b) => [b.earlyJoiners, b.lateJoiners])).toEqual([
      [25, 0],
      [25, 0],
      [0, 25],
      [0, 25],
    ]);
    expect(h.meanPositionByJoinDecile[0]!.meanPosition).toBe(5.5);
  });

  it('an empty cohort has no buckets', () => {
    expect(positionHistogram([], 0)).toMatchObject({ buckets: [], accounts: 0, meanPositionByJoinDecile: [] });
  });
});
