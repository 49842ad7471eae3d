import { DomainError } from '@onsale/shared';
import type { PlanInput } from '@onsale/shared/admission';
import type { Io } from './commands.js';
import { UsageError } from './errors.js';

/** `onsale plan` flags, and the plan input each one fills. */
export const PLAN_FLAGS = {
  seats: 'seats',
  'tickets-per-order': 'ticketsPerOrder',
  'duration-min': 'targetSaleMinutes',
  overbook: 'overbookFactor',
  'checkout-min': 'checkoutMinutes',
  'payment-tps': 'paymentTps',
  'payment-attempts': 'paymentAttemptsPerBuyer',
  'hold-ttl-min': 'holdTtlMinutes',
} as const;
const REQUIRED = ['seats', 'tickets-per-order', 'duration-min', 'overbook', 'checkout-min', 'payment-tps'] as const;

/** The default hold TTL (rule 4 in docs/architecture.md) and the long TTL its reference sale compares it with. */
const DEFAULT_HOLD_TTL_MIN = 6;
const LONG_HOLD_TTL_MIN = 15;

function number(values: Record<string, string | boolean | undefined>, flag: string): number | undefined {
  const raw = values[flag];
  if (raw === undefined) return undefined;
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(n)) throw new UsageError(`plan: --${flag} must be a number; got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Prints the admission plan as JSON: the reference sale's plan (docs/architecture.md) for any inputs, with seats stranded by
 * abandoned holds at the hold TTL (default 6 min) and at 15 min. No database (the admission module, which also
 * holds the controller, loads only when the flags are good).
 */
export async function plan(values: Record<string, string | boolean | undefined>, io: Io): Promise<void> {
  const missing = REQUIRED.filter((f) => values[f] === undefined);
  if (missing.length > 0) throw new UsageError(`plan needs ${missing.map((f) => `--${f} <n>`).join(' ')}`);
  const holdTtl = number(values, 'hold-ttl-min') ?? DEFAULT_HOLD_TTL_MIN;
  const input: PlanInput = {
    seats: number(values, 'seats')!,
    ticketsPerOrder: number(values, 'tickets-per-order')!,
    targetSaleMinutes: number(values, 'duration-min')!,
    overbookFactor: number(values, 'overbook')!,
    checkoutMinutes: number(values, 'checkout-min')!,
    paymentTps: number(values, 'payment-tps')!,
    holdTtlMinutes: holdTtl === LONG_HOLD_TTL_MIN ? [holdTtl] : [holdTtl, LONG_HOLD_TTL_MIN],
  };
  const attempts = number(values, 'payment-attempts');
  if (attempts !== undefined) input.paymentAttemptsPerBuyer = attempts;
  const { planAdmission } = await import('@onsale/shared/admission');
  try {
    io.out(JSON.stringify(planAdmission(input), null, 2));
  } catch (e) {
    // A value the planner refuses is a bad command line: name the flag, not the field.
    if (e instanceof DomainError && e.code === 'INVALID_PLAN_INPUT') {
      const flag = Object.entries(PLAN_FLAGS).find(([, field]) => field === e.details.field)?.[0];
      throw new UsageError(`plan: ${flag ? `--${flag}` : String(e.details.field)}: ${e.message}`);
    }
    throw e;
  }
}
