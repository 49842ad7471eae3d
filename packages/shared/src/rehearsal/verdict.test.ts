import { describe, expect, it } from 'vitest';
import { saleChecks, verdictOf, type VerdictInput } from './verdict.js';

const zeros = { doubleSold: 0, duplicateOrders: 0, drift: 0, faults: [] };
/** The 200,000-fan stadium's goals met, on a quiet machine with the rehearsal's own product. */
const whole: VerdictInput = {
  ...zeros,
  seats: 60_000,
  seatsSold: 59_800,
  seatsWanted: 300_000,
  soldOut: true,
  admittedFans: 30_000,
  buyers: 24_000,
  holdLatencyMs: { p99: 1900, count: 24_500 },
  soldOutPropagationMs: { p99: 1500, count: 120_000 },
  positionExpired: { asTold: 0, late: 12 },
  botSeatShare: 0.05,
  productMeasured: true,
  machine: { cores: 8, busyShare: 0.7, otherCores: 0.1 },
};
const check = (r: VerdictInput, key: string) => saleChecks(r).find((c) => c.key === key)!;

describe('verdictOf', () => {
  it('passes only with no double sale, no duplicate order, no drift and every fault recovered', () => {
    const ok = { ...zeros, faults: [{ recoveredAtMs: 1200 }] };
    expect(verdictOf(ok)).toMatchObject({ verdict: 'PASS', reasons: [] });
    expect(verdictOf({ ...ok, doubleSold: 1 }).verdict).toBe('FAIL');
    expect(verdictOf({ ...ok, duplicateOrders: 2 }).reasons).toEqual(['2 duplicate order(s)']);
    expect(verdictOf({ ...ok, drift: -1 }).verdict).toBe('FAIL');
    expect(verdictOf({ ...ok, faults: [{ recoveredAtMs: null }] }).reasons).toEqual(['1 fault(s) without recovery']);
  });

  it("weighs each of the sale's goals beside its limit: a whole sale that meets them passes, each one missed fails it", () => {
    expect(verdictOf(whole)).toMatchObject({ verdict: 'PASS', reasons: [] });
    expect(saleChecks(whole).map((c) => [c.key, c.ok])).toEqual([
      ['doubleSold', true],
      ['duplicateOrders', true],
      ['drift', true],
      ['seatsSold', true],
      ['admittedPerBuyer', true],
      ['holdP99', true],
      ['soldOutPropagationP99', true],
      ['positionExpiredAsTold', true],
      ['botSeatShare', true],
    ]);
    expect(check(whole, 'seatsSold')).toMatchObject({ value: '59,800 of 60,000 (99.67%)', limit: '>= 99.5%' });
    expect(check(whole, 'admittedPerBuyer')).toMatchObject({ value: '1.25 (30,000 let in, 24,000 bought)', limit: '<= 1.5' });
    // A run stopped with fans let in still buying: the ratio over the fans who finished beside it, the check on the whole.
    expect(check({ ...whole, admittedFans: 40_000, admittedUnfinished: 12_000 }, 'admittedPerBuyer')).toMatchObject({
      value:
        '1.67 (40,000 let in, 24,000 bought; 1.17 over the 28,000 who finished (12,000 still holding, paying or back in line at the end))',
      ok: false,
    });
    expect(check(whole, 'positionExpiredAsTold').note).toMatch(/12 to fans who polled later than told/);
    // Fans back in line on their own after their admission lapsed are named in the note, and still weighed.
    const lapsed = check({ ...whole, positionExpired: { asTold: 3, late: 0, asToldBackInLine: 2 } }, 'positionExpiredAsTold');
    expect(lapsed).toMatchObject({ ok: false, value: '3' });
    expect(lapsed.note).toMatch(/^2 of them back in line on their own after their admission lapsed unheld/);
    const missed: [Partial<VerdictInput>, RegExp][] = [
      [{ seatsSold: 59_600 }, /^seats sold 59,600 of 60,000 \(99\.33%\), limit >= 99\.5%$/],
      [{ admittedFans: 36_001 }, /^fans let in for each fan who bought 1\.50 .*limit <= 1\.5$/],
      [{ holdLatencyMs: { p99: 2001, count: 10 } }, /^hold latency p99, as fans time it 2,001 ms/],
      [{ soldOutPropagationMs: { p99: 11_200, count: 10 } }, /^sold-out propagation p99, to fans who polled as told 11,200 ms/],
      [{ positionExpired: { asTold: 1, late: 0 } }, /^POSITION_EXPIRED to fans who polled as told 1, limit 0$/],
      [{ botSeatShare: 0.1 }, /^seats bots bought 10\.0%, limit < 10%$/],
    ];
    for (const [change, reason] of missed) {
      const v = verdictOf({ ...whole, ...change });
      expect(v.verdict, reason.source).toBe('FAIL');
      expect(v.reasons).toHaveLength(1);
      expect(v.reasons[0]).toMatch(reason);
    }
  });

  it('shows but does not weigh what the run cannot speak to, and says why', () => {
    // A crowd that wanted fewer seats than there were.
    expect(check({ ...whole, seatsSold: 40_000, seatsWanted: 31_000 }, 'seatsSold')).toMatchObject({
      ok: null,
      note: 'the crowd wanted about 31,000 seats, fewer than the 60,000 there were',
    });
    // ...and let in whole (20,000 fans, 30% of them bots refused at their device limit, 10% abandoning): 1.59 let in a
    // buyer whatever admission does; weighed again when some of the crowd was not let in.
    const few = { ...whole, fans: 20_000, seatsSold: 30_209, seatsWanted: 31_500, soldOut: false, admittedFans: 20_000, buyers: 12_609 };
    expect(check(few, 'admittedPerBuyer')).toMatchObject({
      ok: null,
      note: "every fan of the crowd was let in (it wanted about 31,500 of the 60,000 seats): the ratio is the crowd's, not admission's",
    });
    expect(check({ ...few, admittedFans: 19_000 }, 'admittedPerBuyer').ok).toBe(false);
    // Faults struck: the latencies and the sale's pace are the recovery's.
    const faulted = verdictOf({ ...whole, faults: [{ recoveredAtMs: 1 }], holdLatencyMs: { p99: 9000, count: 5 }, admittedFans: 90_000 });
    expect(faulted.verdict).toBe('PASS');
    expect(faulted.checks.find((c) => c.key === 'holdP99')).toMatchObject({ ok: null, note: expect.stringMatching(/^faults struck/) });
    // Other work on the machine: the latencies are not the product's to answer for.
    const busy = { ...whole, machine: { cores: 2, busyShare: 1, otherCores: 1.4 }, holdLatencyMs: { p99: 30_000, count: 5 } };
    expect(verdictOf(busy).verdict).toBe('PASS');
    expect(check(busy, 'holdP99').note).toBe('not a quiet machine: other work took 1.40 of its 2 cores');
    // Against --target other work hides the product: a machine with all its cores busy is not weighed on, one with room is.
    const target = { ...whole, productMeasured: false, machine: { cores: 2, busyShare: 0.95, otherCores: 1.9 } };
    expect(check({ ...target, holdLatencyMs: { p99: 5000, count: 5 } }, 'holdP99').ok).toBeNull();
    expect(
      check({ ...target, machine: { cores: 2, busyShare: 0.5, otherCores: 1 }, holdLatencyMs: { p99: 5000, count: 5 } }, 'holdP99').ok,
    ).toBe(false);
    // Fans polled at the sell-out, none as told: the driver held them back, and the report says how to rehearse it.
    expect(check({ ...whole, soldOutPropagationMs: { p99: null, count: 0 }, soldOutPolling: 900 }, 'soldOutPropagationP99')).toMatchObject({
      ok: null,
      note: expect.stringMatching(/^none of the 900 fans polling at the sell-out polled as told .*--poll-budget/),
    });
    // Not sold out: no propagation to weigh.
    expect(check({ ...whole, soldOut: false, soldOutPropagationMs: { p99: null, count: 0 } }, 'soldOutPropagationP99').ok).toBeNull();
  });

  it("weighs the hold goal on the product's part when the driver timed its own wait apart, and never lets that wait hide a slow product", () => {
    const split = (product: number, lag: number, asFans = product + lag): VerdictInput => ({
      ...whole,
      holdLatencyMs: { p99: asFans, count: 24_500 },
      holdLatencyProductMs: { p99: product, count: 24_500 },
      holdDriverLagMs: { p99: lag },
    });
    // The driver kept up: weighed on the product's part (the fans' figure shown beside it).
    expect(check(split(1900, 50), 'holdP99')).toMatchObject({
      ok: true,
      value: expect.stringMatching(/^1,900 ms .*1,950 ms with the driver's wait/),
    });
    // The product was slow: it fails whatever the driver's lag.
    expect(check(split(2500, 50), 'holdP99').ok).toBe(false);
    expect(check(split(2500, 90_000), 'holdP99').ok).toBe(false);
    expect(verdictOf(split(2500, 90_000)).verdict).toBe('FAIL');
    // The product fast but the driver behind: not weighed, and the report says the crowd could not keep up.
    expect(check(split(900, 60_000), 'holdP99')).toMatchObject({
      ok: null,
      note: expect.stringMatching(/^the crowd could not keep up: holds waited up to 60,000 ms/),
    });
    expect(verdictOf(split(900, 60_000)).verdict).toBe('PASS');
  });
});
