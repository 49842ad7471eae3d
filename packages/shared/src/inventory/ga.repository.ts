import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { splitCapacity } from './ga.js';
import { splitGaByTier } from '../allocations/assign.js';
import type { GaUnitState } from './ga.table.js';
import { commitModeExpression, type HoldCommit } from './hold-commit.js';

/**
 * Creates the shard rows of an event's general-admission sections (in the event's creating transaction). With
 * presale tiers each counter is split between them (splitGaByTier) and every shard belongs to one tier.
 */
export async function insertGaShards(
  trx: Trx,
  eventId: string,
  sections: { code: string; capacity: number; shards: number }[],
  tiers?: readonly { code: string; share?: number }[],
): Promise<void> {
  const rows = sections.flatMap((s) => {
    let shard = 0;
    return splitGaByTier(s.capacity, s.shards, tiers).flatMap((p) =>
      p.capacity === 0
        ? []
        : splitCapacity(p.capacity, p.shards).map((capacity) => ({
            event_id: eventId,
            section_code: s.code,
            shard: shard++,
            capacity,
            available: capacity,
            allocation: p.allocation,
          })),
    );
  });
  if (rows.length > 0) await trx.insertInto('ga_shards').values(rows).execute();
}

export interface GaHoldAttempt {
  eventId: string;
  holdId: string;
  accountId: string;
  sectionCode: string;
  quantity: number;
  ttlSeconds: number;
  /** The per-account seat limit of the event (reserved and GA together). */
  limit: number;
  /** deviceFingerprint of the fan's device, recorded on the hold; null: no device limit applies. */
  deviceHash: string | null;
  /** The per-device seat limit of the event (every account on the device, reserved and GA together). */
  deviceLimit: number;
  /** Orders the shards for this attempt (a random start, then the others). */
  seed: number;
  /** The presale tier whose shards the units come from; null: the event has no tiers. */
  allocation: string | null;
  /** The request's Idempotency-Key, written with the hold (in its statement); null: none. */
  idempotencyKey?: string | null;
  /** The hash of the request the key is bound to, written with the key. */
  requestHash?: string | null;
}

/**
 * One GA hold attempt as one statement (`onsale_hold_ga`: the account's and the device's locks and counts, one
 * conditional UPDATE on a free shard, or a take across shards under their locks, all or nothing). `expiresAt` is
 * null when refused; then `available` says how many units are left when the refusal was for want of units (null
 * for a limit). The hold is written with its Idempotency-Key; `keyed` is the fan's hold made under the key already,
 * when there is one (then nothing else was done).
 */
export async function attemptGaHold(
  db: Db | Trx,
  a: GaHoldAttempt,
  commit: HoldCommit,
): Promise<{
  used: number;
  deviceUsed: number;
  expiresAt: Date | null;
  available: number | null;
  commitMode: string;
  keyed: string | null;
}> {
  const key = a.idempotencyKey ?? null;
  const { rows } = await sql<{
    used: number;
    device_used: number;
    expires_at: Date | null;
    available: number | null;
    commit_mode: string;
    keyed: string | null;
  }>`
    SELECT used, device_used, expires_at, available, ${commitModeExpression(commit)} AS commit_mode, keyed
    FROM onsale_hold_ga(${a.holdId}::uuid, ${a.eventId}::uuid, ${a.accountId}::text, ${a.deviceHash}::text, ${a.sectionCode}::text,
                        ${a.quantity}::int, ${a.limit}::int, ${a.deviceLimit}::int, ${a.ttlSeconds}::int, ${a.seed}::int, ${a.allocation}::text,
                        ${key}::text, ${key === null ? null : (a.requestHash ?? null)}::text)`.execute(db);
  const r = rows[0]!;
  return {
    used: r.used,
    deviceUsed: r.device_used,
    expiresAt: r.expires_at,
    available: r.available,
    commitMode: r.commit_mode,
    keyed: r.keyed,
  };
}

export interface HeldUnits {
  section: string;
  quantity: number;
  priceCents: number;
}

/** A GA hold's units per section (held or sold; units given back are no longer the hold's). */
export async function unitsOfHold(db: Db | Trx, holdId: string): Promise<HeldUnits[]> {
  const { rows } = await sql<HeldUnits>`
    SELECT u.section_code AS section, sum(u.quantity)::int AS quantity, p.price_cents AS "priceCents"
    FROM ga_hold_units u
    JOIN sections c ON c.event_id = u.event_id AND c.code = u.section_code
    JOIN price_levels p ON p.event_id = c.event_id AND p.code = c.price_level
    WHERE u.hold_id = ${holdId} AND u.state IN ('HELD', 'SOLD')
    GROUP BY u.section_code, p.price_cents
    ORDER BY u.section_code`.execute(db);
  return rows;
}

/** What a GA hold costs: its units at their section's price (0 for a hold with no GA units). */
export async function amountOfGaHold(db: Db | Trx, holdId: string): Promise<number> {
  return (await unitsOfHold(db, holdId)).reduce((a, u) => a + u.quantity * u.priceCents, 0);
}

const counterColumn = { HELD: 'held', SOLD: 'sold', RETURNED: 'available' } as const;

/**
 * Moves the units of some holds from one state to another and the shard counters with them: HELD -> RETURNED
 * (release, sweep), HELD -> SOLD (checkout), SOLD -> RETURNED (order cancelled). The shards are locked first, in
 * (event, section, shard) order, the order every GA writer uses, so this never deadlocks with a hold attempt that
 * reclaims lapsed units. With `expected`, all or nothing: unless exactly that many units are in `from`, nothing moves
 * and 0 is returned. Returns the units moved. Runs in the caller's transaction.
 */
export async function moveGaUnits(trx: Trx, holdIds: string[], from: GaUnitState, to: GaUnitState, expected?: number): Promise<number> {
  if (holdIds.length === 0 || from === to) return 0;
  await sql`
    SELECT 1 FROM ga_shards s
    WHERE (s.event_id, s.section_code, s.shard) IN (SELECT event_id, section_code, shard FROM ga_hold_units WHERE hold_id = ANY(${holdIds}::uuid[]))
    ORDER BY s.event_id, s.section_code, s.shard
    FOR UPDATE OF s`.execute(trx);
  const fromCol = sql.ref(counterColumn[from]);
  const toCol = sql.ref(counterColumn[to]);
  const { rows } = await sql<{ moved: number }>`
    WITH moved AS (
      UPDATE ga_hold_units SET state = ${to}
      WHERE hold_id = ANY(${holdIds}::uuid[]) AND state = ${from}
        AND (${expected ?? null}::int IS NULL OR
             (SELECT coalesce(sum(quantity), 0) FROM ga_hold_units WHERE hold_id = ANY(${holdIds}::uuid[]) AND state = ${from}) = ${expected ?? null}::int)
      RETURNING event_id, section_code, shard, quantity),
    per_shard AS (SELECT event_id, section_code, shard, sum(quantity)::int AS q FROM moved GROUP BY event_id, section_code, shard),
    counters AS (
      UPDATE ga_shards s SET ${fromCol} = s.${fromCol} - p.q, ${toCol} = s.${toCol} + p.q
      FROM per_shard p WHERE s.event_id = p.event_id AND s.section_code = p.section_code AND s.shard = p.shard
      RETURNING p.q)
    SELECT coalesce(sum(q), 0)::int AS moved FROM counters`.execute(trx);
  return rows[0]?.moved ?? 0;
}
