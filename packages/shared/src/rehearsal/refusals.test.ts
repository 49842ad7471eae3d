import { describe, expect, it } from 'vitest';
import { RefusalCounter, refusalReasonOf, unavailableByKind } from './refusals.js';
import { reportMarkdown, type RehearsalReport } from './report.js';

describe("the report's refusals, by request kind and reason", () => {
  it('counts every non-2xx answer by kind of request, answer and a 503s rule; 2xx and 3xx are not refusals', () => {
    const c = new RefusalCounter();
    const shed = { error: 'SERVICE_UNAVAILABLE', reason: 'overload_event_loop' };
    for (let i = 0; i < 3; i++) c.count('hold', 503, '503 SERVICE_UNAVAILABLE', shed);
    c.count('join', 503, '503 SERVICE_UNAVAILABLE', shed);
    c.count('hold', 503, '503 SERVICE_UNAVAILABLE', { error: 'SERVICE_UNAVAILABLE', reason: 'request_budget' });
    c.count('hold', 503, '503 ORIGIN_UNAVAILABLE', { error: 'ORIGIN_UNAVAILABLE' });
    c.count('hold', 409, '409 SEATS_UNAVAILABLE', { error: 'SEATS_UNAVAILABLE', reason: 'not a 503' });
    c.count('checkout', 0, 'network UND_ERR_SOCKET', null);
    c.count('hold', 201, '201', { holdId: 'h' });
    c.count('status', 200, '200', { state: 'WAITING' });
    c.count('seat map', 304, '304', null);
    expect(c.rows()).toEqual([
      { kind: 'hold', answer: '503 SERVICE_UNAVAILABLE', reason: 'overload_event_loop', count: 3 },
      { kind: 'checkout', answer: 'network UND_ERR_SOCKET', reason: null, count: 1 },
      { kind: 'hold', answer: '409 SEATS_UNAVAILABLE', reason: null, count: 1 },
      { kind: 'hold', answer: '503 ORIGIN_UNAVAILABLE', reason: 'none given', count: 1 },
      { kind: 'hold', answer: '503 SERVICE_UNAVAILABLE', reason: 'request_budget', count: 1 },
      { kind: 'join', answer: '503 SERVICE_UNAVAILABLE', reason: 'overload_event_loop', count: 1 },
    ]);
    expect(unavailableByKind(c.rows())).toEqual({
      hold: { overload_event_loop: 3, 'none given': 1, request_budget: 1 },
      join: { overload_event_loop: 1 },
    });
  });

  it("reads a 503's reason only when it is a short string", () => {
    expect(refusalReasonOf(503, { reason: 'overload_pool' })).toBe('overload_pool');
    expect(refusalReasonOf(503, { reason: 42 })).toBe('none given');
    expect(refusalReasonOf(503, { reason: 'x'.repeat(65) })).toBe('none given');
    expect(refusalReasonOf(503, null)).toBe('none given');
    expect(refusalReasonOf(429, { reason: 'overload_pool' })).toBeNull();
  });

  it('the Markdown has a table of them under the answers, and none when the report has no refusals (older reports)', () => {
    const base = {
      eventId: 'e',
      eventName: 'E',
      target: 'spawn',
      startedAt: 's',
      finishedAt: 'f',
      timeScale: 30,
      settings: {},
      fans: 1,
      humans: 1,
      bots: 0,
      seats: 1,
      seatsSold: 0,
      orders: 0,
      soldOut: false,
      lastSaleMs: null,
      doubleSold: 0,
      duplicateOrders: 0,
      drift: 0,
      soldOutPropagationMs: { p50: null, p99: null, max: null, count: 0 },
      holdLatencyMs: { p50: null, p99: null, count: 0 },
      admittedPerMinute: { plan: 1, actual: null },
      strandedSeats: [],
      rankCorrelation: null,
      rankedFans: 0,
      botSeatShare: 0,
      unfinishedFans: 0,
      unfinishedBy: {},
      waitlistJoined: 0,
      waitlistNotified: 0,
      faults: [],
      answers: { '503 SERVICE_UNAVAILABLE': 1234 },
      driver: { cpuSeconds: 0, wallSeconds: 1, peakRssMb: 1, requests: 1, requestsPerSecond: 1, eventLoopDelayP99Ms: null },
      verdict: 'FAIL',
      reasons: [],
    } satisfies RehearsalReport;
    const md = reportMarkdown({
      ...base,
      refusals: [{ kind: 'hold', answer: '503 SERVICE_UNAVAILABLE', reason: 'overload_event_loop', count: 1234 }],
    });
    expect(md).toContain('### Refusals by request and reason');
    expect(md).toContain('| hold | 503 SERVICE_UNAVAILABLE | overload_event_loop | 1,234 |');
    expect(reportMarkdown(base)).not.toContain('Refusals by request');
    // A seat sold or held twice says which check counted it; a report without them (or with none) says nothing more.
    const parts = { seenInTwoOrders: 1, liveDoubleHolds: 4, ordersBeyondSold: 0, holdConflicts: [{ seat: 7, first: 'a', second: 'b' }] };
    expect(reportMarkdown({ ...base, doubleSold: 5, doubleSoldParts: parts })).toContain(
      '| double-sold seats | 5 (seen in two orders 1, held by two kept holds 4, in orders beyond the seats sold 0) |',
    );
    expect(reportMarkdown({ ...base, doubleSoldParts: { ...parts, seenInTwoOrders: 0, liveDoubleHolds: 0 } })).toContain(
      '| double-sold seats | 0 |',
    );
    // The seat-map reads the edge answered from its cache: said in the driver's line when there were any.
    expect(reportMarkdown({ ...base, driver: { ...base.driver, seatMapsFromEdgeCache: 1234 } })).toContain(
      "1,234 seat-map reads were answered from the edge's cache.",
    );
    expect(reportMarkdown(base)).not.toContain("from the edge's cache");
  });
});
