// The rehearsal's verdict: the one function the CLI's report and the console's war room both judge a run with. Pure.
//
// A whole sale is judged on the zeros (nothing sold twice, no duplicate order, no drift), every fault's recovery, and
// the sale's goals (docs/rehearsals.md, "The verdict"): the seats sold, the fans let in for each fan who bought, the
// hold latency and the sold-out propagation as fans time them, turns lost by fans who polled as told, the bots' share.
// Each goal is printed beside its limit; one the run cannot speak to (a crowd that wanted fewer seats than there were,
// faults struck, a machine busy with other work) is shown but not weighed, and says why.

/** The sale's goals (issue 28's "Done when"): each figure's limit. */
export const SALE_GOALS = {
  /** Share of the seats sold, at least. */
  seatsSoldShare: 0.995,
  /** Fans let in (who read ADMITTED) for each fan who bought, at most. */
  admittedPerBuyer: 1.5,
  /** A hold as its fan timed it (retries included), p99, ms, at most. */
  holdP99Ms: 2000,
  /** From the last sale to each polling fan's first SOLD_OUT, p99, ms, at most. */
  soldOutPropagationP99Ms: 2000,
  /** POSITION_EXPIRED answers to fans who polled as told. */
  positionExpiredAsTold: 0,
  /**
   * The most (p99, ms) a hold's requests may wait inside the crowd's driver for a connection for the hold goal to be
   * weighed on the product's figure: beyond it the crowd could not keep up (it sent the product less than a real crowd
   * would have), so a product figure under its limit is not weighed; one over its limit fails all the same.
   */
  driverLagP99Ms: 200,
  /** Share of the seats sold that bots bought, below. */
  botSeatShare: 0.1,
} as const;

/**
 * Other work on the machine (cores' worth, on average) beyond which its latencies are not the product's to answer
 * for: the goals are for a quiet machine, and a run sharing two cores with seven others measures them.
 */
export const QUIET_MACHINE_OTHER_CORES = 0.5;

export type SaleCheckKey =
  | 'doubleSold'
  | 'duplicateOrders'
  | 'drift'
  | 'faultsRecovered'
  | 'seatsSold'
  | 'admittedPerBuyer'
  | 'holdP99'
  | 'soldOutPropagationP99'
  | 'positionExpiredAsTold'
  | 'botSeatShare';

/** One check of the verdict: the figure beside its limit, and whether it was met (null: shown, not weighed). */
export interface SaleCheck {
  key: SaleCheckKey;
  label: string;
  value: string;
  limit: string;
  ok: boolean | null;
  /** Why a check was not weighed, or what its figure counts. */
  note?: string;
}

/** What the verdict weighs: a report's fields (older reports lack the sale's, and are judged on the zeros). */
export interface VerdictInput {
  doubleSold: number;
  duplicateOrders: number;
  drift: number;
  faults: readonly { recoveredAtMs: number | null }[];
  seats?: number;
  seatsSold?: number;
  /** About how many seats the crowd's fans would buy (humans who pay, their parties): the sold share is weighed when >= seats. */
  seatsWanted?: number;
  soldOut?: boolean;
  /** The crowd's fans (bots included). */
  fans?: number;
  /** Fans who read ADMITTED, once each, and fans who bought. */
  admittedFans?: number;
  buyers?: number;
  /**
   * Of the fans let in, those the run's end caught still holding, paying or back in line (a run stopped early): the
   * ratio over the fans who finished is said beside the whole one (the check stays on the whole one).
   */
  admittedUnfinished?: number;
  /** Holds as fans timed them (first request to the 201, retries included): what the driver saw. */
  holdLatencyMs?: { p99: number | null; count: number };
  /**
   * The same less the time each hold's requests waited inside the driver for a connection (a fan with a connection of
   * its own, as a real crowd has, would not have waited it), and that wait: the goal is weighed on these when present.
   */
  holdLatencyProductMs?: { p99: number | null; count: number };
  holdDriverLagMs?: { p99: number | null };
  /** Over the fans who read SOLD_OUT on a poll sent as told (the goal's figure). */
  soldOutPropagationMs?: { p99: number | null; count: number };
  /** Every fan who read SOLD_OUT on a poll after the last sale, as told or not. */
  soldOutPolling?: number;
  positionExpired?: { asTold: number; late: number; asToldBackInLine?: number };
  botSeatShare?: number;
  /** The product's processes were the rehearsal's own (--spawn): other work on the machine is told apart from them. */
  productMeasured?: boolean;
  machine?: { cores: number; busyShare: number; otherCores: number } | null;
  stopped?: unknown;
}

const pct = (v: number, digits = 1) => `${(v * 100).toFixed(digits)}%`;
const ms = (v: number | null) => (v === null ? 'n/a' : `${Math.round(v).toLocaleString('en-US')} ms`);
const int = (v: number) => v.toLocaleString('en-US');

/** Why the latency goals cannot be weighed on this run (null: they can). */
export function latencyExcuse(r: VerdictInput): string | null {
  if (r.faults.length > 0) return 'faults struck: latencies meanwhile are the fault recovery, not the sale';
  const m = r.machine;
  if (!m) return null;
  if (r.productMeasured !== false && m.otherCores > QUIET_MACHINE_OTHER_CORES)
    return `not a quiet machine: other work took ${m.otherCores.toFixed(2)} of its ${m.cores} cores`;
  if (r.productMeasured === false && m.busyShare >= 0.9)
    return `the machine's cores were ${pct(m.busyShare, 0)} busy, and against --target the product's share of them is not measured`;
  return null;
}

/** Every check, in the order the report prints them. */
export function saleChecks(r: VerdictInput): SaleCheck[] {
  const out: SaleCheck[] = [
    { key: 'doubleSold', label: 'double-sold seats', value: int(r.doubleSold), limit: '0', ok: r.doubleSold === 0 },
    { key: 'duplicateOrders', label: 'duplicate orders', value: int(r.duplicateOrders), limit: '0', ok: r.duplicateOrders === 0 },
    { key: 'drift', label: 'drift (available + held + sold - capacity)', value: int(r.drift), limit: '0', ok: r.drift === 0 },
  ];
  const unrecovered = r.faults.filter((f) => f.recoveredAtMs === null).length;
  if (r.faults.length > 0)
    out.push({
      key: 'faultsRecovered',
      label: 'faults recovered from',
      value: `${r.faults.length - unrecovered} of ${r.faults.length}`,
      limit: 'all',
      ok: unrecovered === 0,
    });
  const faulted = r.faults.length > 0 ? 'faults struck: not a plain sale' : null;
  if (r.seats !== undefined && r.seatsSold !== undefined) {
    const share = r.seats === 0 ? 1 : r.seatsSold / r.seats;
    const few =
      r.seatsWanted !== undefined && r.seatsWanted < r.seats
        ? `the crowd wanted about ${int(Math.round(r.seatsWanted))} seats, fewer than the ${int(r.seats)} there were`
        : null;
    out.push({
      key: 'seatsSold',
      label: 'seats sold',
      value: `${int(r.seatsSold)} of ${int(r.seats)} (${pct(share, 2)})`,
      limit: `>= ${pct(SALE_GOALS.seatsSoldShare)}`,
      ok: few ? null : share >= SALE_GOALS.seatsSoldShare,
      ...(few ? { note: few } : {}),
    });
  }
  if (r.admittedFans !== undefined && r.buyers !== undefined) {
    const ratio = r.buyers === 0 ? null : r.admittedFans / r.buyers;
    // Seats for more than the crowd wanted and every fan let in: any admission rule lets the whole crowd in then, and the
    // ratio is the crowd's (bots refused at their limits, fans who leave), not admission's.
    const everyone =
      r.seatsWanted !== undefined &&
      r.seats !== undefined &&
      r.seatsWanted < r.seats &&
      r.soldOut !== true &&
      r.fans !== undefined &&
      r.admittedFans >= r.fans
        ? `every fan of the crowd was let in (it wanted about ${int(Math.round(r.seatsWanted))} of the ${int(r.seats)} seats): the ratio is the crowd's, not admission's`
        : null;
    const why = faulted ?? (r.buyers === 0 ? 'nobody bought' : everyone);
    out.push({
      key: 'admittedPerBuyer',
      label: 'fans let in for each fan who bought',
      value: `${ratio === null ? 'n/a' : ratio.toFixed(2)} (${int(r.admittedFans)} let in, ${int(r.buyers)} bought${finishedRatio(r.admittedFans, r.buyers, r.admittedUnfinished)})`,
      limit: `<= ${SALE_GOALS.admittedPerBuyer}`,
      ok: why ? null : ratio! <= SALE_GOALS.admittedPerBuyer,
      ...(why ? { note: why } : {}),
    });
  }
  const excuse = latencyExcuse(r);
  if (r.holdLatencyProductMs && r.holdDriverLagMs) {
    // Weighed on the product's part of the hold as fans time it (retries, the product's Retry-After waits and its
    // answers all count; only the wait for one of the driver's connections does not). Over its limit it fails whatever
    // the driver did; under it, a driver that lagged means the product was not sent what a real crowd sends.
    const p99 = r.holdLatencyProductMs.p99;
    const lag = r.holdDriverLagMs.p99 ?? 0;
    const over = p99 !== null && p99 > SALE_GOALS.holdP99Ms;
    const behind =
      !over && lag > SALE_GOALS.driverLagP99Ms
        ? `the crowd could not keep up: holds waited up to ${ms(lag)} (p99) inside the driver for a connection, so the product was sent fewer at once than a real crowd sends`
        : null;
    const why = excuse ?? (r.holdLatencyProductMs.count === 0 ? 'no hold was made' : behind);
    out.push({
      key: 'holdP99',
      label: "hold latency p99, as fans time it (the product's part)",
      value: `${ms(p99)} (${int(r.holdLatencyProductMs.count)} holds; ${ms(r.holdLatencyMs?.p99 ?? null)} with the driver's wait, whose p99 was ${ms(lag)})`,
      limit: `<= ${ms(SALE_GOALS.holdP99Ms)}`,
      ok: why ? null : !over,
      ...(why ? { note: why } : {}),
    });
  } else if (r.holdLatencyMs) {
    const why = excuse ?? (r.holdLatencyMs.count === 0 ? 'no hold was made' : null);
    out.push({
      key: 'holdP99',
      label: 'hold latency p99, as fans time it',
      value: `${ms(r.holdLatencyMs.p99)} (${int(r.holdLatencyMs.count)} holds)`,
      limit: `<= ${ms(SALE_GOALS.holdP99Ms)}`,
      ok: why ? null : r.holdLatencyMs.p99! <= SALE_GOALS.holdP99Ms,
      ...(why ? { note: why } : {}),
    });
  }
  if (r.soldOutPropagationMs) {
    const why =
      excuse ??
      (r.soldOut === false
        ? 'not sold out'
        : r.soldOutPropagationMs.count > 0
          ? null
          : r.soldOutPolling
            ? `none of the ${int(r.soldOutPolling)} fans polling at the sell-out polled as told (the driver's poll budget held them back: raise --poll-budget)`
            : 'no fan was polling at the sell-out');
    out.push({
      key: 'soldOutPropagationP99',
      label: 'sold-out propagation p99, to fans who polled as told',
      value: `${ms(r.soldOutPropagationMs.p99)} (${int(r.soldOutPropagationMs.count)} polling fans)`,
      limit: `<= ${ms(SALE_GOALS.soldOutPropagationP99Ms)}`,
      ok: why ? null : r.soldOutPropagationMs.p99! <= SALE_GOALS.soldOutPropagationP99Ms,
      ...(why ? { note: why } : {}),
    });
  }
  if (r.positionExpired) {
    out.push({
      key: 'positionExpiredAsTold',
      label: 'POSITION_EXPIRED to fans who polled as told',
      value: int(r.positionExpired.asTold),
      limit: String(SALE_GOALS.positionExpiredAsTold),
      ok: faulted ? null : r.positionExpired.asTold <= SALE_GOALS.positionExpiredAsTold,
      note:
        faulted ??
        `${r.positionExpired.asToldBackInLine ? `${int(r.positionExpired.asToldBackInLine)} of them back in line on their own after their admission lapsed unheld (their hold waited over its 10 minutes); ` : ''}and ${int(r.positionExpired.late)} to fans who polled later than told`,
    });
  }
  if (r.botSeatShare !== undefined && r.seatsSold !== undefined) {
    out.push({
      key: 'botSeatShare',
      label: 'seats bots bought',
      value: pct(r.botSeatShare),
      limit: `< ${pct(SALE_GOALS.botSeatShare, 0)}`,
      ok: r.seatsSold === 0 ? null : r.botSeatShare < SALE_GOALS.botSeatShare,
      ...(r.seatsSold === 0 ? { note: 'nothing sold' } : {}),
    });
  }
  return out;
}

/** A missed check in words, for the verdict's reasons. */
function reasonOf(c: SaleCheck, r: VerdictInput): string {
  switch (c.key) {
    case 'doubleSold':
      return `${c.value} seat(s) sold or held twice`;
    case 'duplicateOrders':
      return `${c.value} duplicate order(s)`;
    case 'drift':
      return `inventory drift ${c.value} (available + held + sold - capacity)`;
    case 'faultsRecovered':
      return `${r.faults.filter((f) => f.recoveredAtMs === null).length} fault(s) without recovery`;
    default:
      return `${c.label} ${c.value}, limit ${c.limit}`;
  }
}

/**
 * PASS when every weighed check is met: nothing sold twice, no order made twice, the inventory adds up, every fault
 * recovered from, and the sale's goals that apply to the run. The checks come back for the report to print.
 */
export function verdictOf(r: VerdictInput): { verdict: 'PASS' | 'FAIL'; reasons: string[]; checks: SaleCheck[] } {
  const checks = saleChecks(r);
  const reasons = checks.filter((c) => c.ok === false).map((c) => reasonOf(c, r));
  return { verdict: reasons.length === 0 ? 'PASS' : 'FAIL', reasons, checks };
}

/**
 * `; 1.20 over the 15,662 who finished (7,435 still holding, paying or back in line at the end)` when the run's end
 * caught fans let in mid-purchase; '' otherwise.
 */
function finishedRatio(admitted: number, buyers: number, unfinished: number | undefined): string {
  if (unfinished === undefined || unfinished <= 0 || buyers === 0) return '';
  const finished = admitted - unfinished;
  return `; ${(finished / buyers).toFixed(2)} over the ${int(finished)} who finished (${int(unfinished)} still holding, paying or back in line at the end)`;
}
