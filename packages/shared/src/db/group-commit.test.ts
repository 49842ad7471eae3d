import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

describe('GroupCommit', () => {
  it('shares batches, never runs two items with a common key at once, and answers each item alone', async () => {
    const batches: string[][] = [];
    let inFlight = new Set<string>();
    const gc = new GroupCommit<string, string>(
      async (items) => {
        const keys = items.map((i) => i.split(':')[0]!);
        for (const k of keys) expect(inFlight.has(k)).toBe(false);
        expect(new Set(keys).size).toBe(keys.length);
        inFlight = new Set([...inFlight, ...keys]);
        batches.push(items);
        await new Promise((r) => setTimeout(r, 5));
        for (const k of keys) inFlight.delete(k);
        return items.map((i) => (i.endsWith('bad') ? new Error(`refused ${i}`) : `ok ${i}`));
      },
      { keys: (i) => [i.split(':')[0]!], maxConcurrentBatches: 2 },
    );
    const items = ['a:1', 'b:1', 'a:2', 'c:bad', 'a:3', 'b:2'];
    const out = await Promise.allSettled(items.map((i) => gc.submit(i)));
    expect(out.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      'ok a:1',
      'ok b:1',
      'ok a:2',
      'refused c:bad',
      'ok a:3',
      'ok b:2',
    ]);
    expect(batches[0]).toEqual(['a:1', 'b:1', 'c:bad']);
    expect(batches.flat().sort()).toEqual([...items].sort());
  });

  it('writes a failed batch again item by item when asked to', async () => {
    const gc = new GroupCommit<number, number>(
      async (items) => {
        if (items.length > 1) throw new Error('deadlock');
        if (items[0] === 3) throw new Error('three');
        return [items[0]! * 10];
      },
      { retryAlone: true },
    );
    const out = await Promise.allSettled([1, 2, 3].map((i) => gc.submit(i)));
    expect(out.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([10, 20, 'three']);
  });

  it('does not write a batch again after its connection was lost: it may have committed, so each caller hears of the outage', async () => {
    const written: number[][] = [];
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    const gc = new GroupCommit<number, number>(
      async (items) => {
        written.push(items);
        throw lost;
      },
      { retryAlone: true },
    );
    const out = await Promise.allSettled([1, 2, 3].map((i) => gc.submit(i)));
    expect(out.map((o) => (o.status === 'rejected' ? o.reason : o.value))).toEqual([lost, lost, lost]);
    expect(written).toEqual([[1, 2, 3]]);
  });

  it('writes a batch the server rolled back (a deadlock victim) again item by item', async () => {
    const written: number[][] = [];
    const gc = new GroupCommit<number, number>(
      async (items) => {
        written.push(items);
        if (items.length > 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
        return [items[0]! * 10];
      },
      { retryAlone: true },
    );
    expect(await Promise.all([1, 2].map((i) => gc.submit(i)))).toEqual([10, 20]);
    expect(written).toEqual([[1, 2], [1], [2]]);
  });
});
