import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { commitModeExpression, type HoldCommit } from './hold-commit.js';
import { attemptHold, type HoldAttempt, type HoldAttemptResult } from './holds.repository.js';

// The hold batcher's statement (hold-batcher.ts): many hold attempts in one.

/** The batch statement: attemptHold's rules, for many attempts at once. Results in the order of `attempts`. */
export async function runBatch(db: Db, attempts: HoldAttempt[], commit: HoldCommit): Promise<HoldAttemptResult[]> {
  if (attempts.length === 1) return [await attemptHold(db, attempts[0]!, commit)];
  const seatHold: string[] = [];
  const seatIds: number[] = [];
  for (const a of attempts)
    for (const id of a.seatIds) {
      seatHold.push(a.holdId);
      seatIds.push(id);
    }
  const { rows } = await sql<{
    hold_id: string;
    used: number;
    device_used: number;
    taken: (number | string)[] | null;
    expires_at: Date | null;
    commit_mode: string;
    keyed: string | null;
  }>`
    WITH mode AS MATERIALIZED (SELECT ${commitModeExpression(commit)} AS commit_mode),
    input AS MATERIALIZED (
      SELECT * FROM unnest(${attempts.map((a) => a.holdId)}::uuid[], ${attempts.map((a) => a.eventId)}::uuid[],
                           ${attempts.map((a) => a.accountId)}::text[], ${attempts.map((a) => a.sectionCode)}::text[],
                           ${attempts.map((a) => a.seatIds.length)}::int[], ${attempts.map((a) => a.ttlSeconds)}::int[],
                           ${attempts.map((a) => a.limit)}::int[], ${attempts.map((a) => a.deviceHash ?? null)}::text[],
                           ${attempts.map((a) => a.deviceLimit ?? a.limit)}::int[], ${attempts.map((a) => a.allocation ?? null)}::text[],
                           ${attempts.map((a) => a.idempotencyKey ?? null)}::text[],
                           ${attempts.map((a) => (a.idempotencyKey == null ? null : (a.requestHash ?? null)))}::text[])
        AS t(hold_id, event_id, account_id, section_code, qty, ttl, lim, device_hash, device_lim, allocation, idem_key, request_hash)
      ORDER BY event_id, account_id),
    -- The account's lock and count, then the hold under the attempt's key (read under that lock: exact).
    accounts AS MATERIALIZED (
      SELECT hold_id, onsale_lock_account_seats(event_id, account_id) AS n, onsale_hold_of_key(event_id, account_id, idem_key) AS keyed
      FROM input),
    -- Device locks after every account lock (the initplan on accounts runs first), in device order.
    devices AS MATERIALIZED (
      SELECT hold_id, onsale_lock_device_seats(event_id, device_hash) AS d FROM input
      WHERE (SELECT count(*) FROM accounts) >= 0 ORDER BY event_id, device_hash),
    used AS MATERIALIZED (SELECT a.hold_id, a.n, a.keyed, d.d FROM accounts a JOIN devices d ON d.hold_id = a.hold_id),
    wanted AS (SELECT * FROM unnest(${seatHold}::uuid[], ${seatIds}::bigint[]) AS w(hold_id, seat_id)),
    free AS (
      SELECT s.event_id, s.id, w.hold_id FROM wanted w
      JOIN input i ON i.hold_id = w.hold_id
      JOIN used u ON u.hold_id = w.hold_id
      JOIN seats s ON s.event_id = i.event_id AND s.id = w.seat_id
      WHERE (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.expires_at <= now())) AND u.n + i.qty <= i.lim AND u.d + i.qty <= i.device_lim
        AND s.allocation IS NOT DISTINCT FROM i.allocation AND u.keyed IS NULL
      FOR UPDATE OF s SKIP LOCKED),
    complete AS (
      SELECT f.hold_id FROM free f JOIN input i ON i.hold_id = f.hold_id GROUP BY f.hold_id, i.qty HAVING count(*) = i.qty),
    taken AS (
      UPDATE seats s SET status = 'HELD', hold_id = f.hold_id, expires_at = now() + make_interval(secs => i.ttl), version = s.version + 1
      FROM free f JOIN input i ON i.hold_id = f.hold_id
      WHERE s.event_id = f.event_id AND s.id = f.id AND f.hold_id IN (SELECT hold_id FROM complete)
      RETURNING s.id, f.hold_id),
    account AS (
      INSERT INTO accounts (id) SELECT DISTINCT account_id FROM input WHERE hold_id IN (SELECT hold_id FROM complete)
      ON CONFLICT (id) DO NOTHING),
    hold AS (
      INSERT INTO holds (id, event_id, account_id, section_code, quantity, expires_at, device_hash, allocation, idempotency_key, request_hash)
      SELECT hold_id, event_id, account_id, section_code, qty, now() + make_interval(secs => ttl), device_hash, allocation, idem_key, request_hash
      FROM input WHERE hold_id IN (SELECT hold_id FROM complete)
      RETURNING id, expires_at)
    SELECT i.hold_id, u.n::int AS used, u.d::int AS device_used, (SELECT array_agg(t.id) FROM taken t WHERE t.hold_id = i.hold_id) AS taken, h.expires_at,
           (SELECT commit_mode FROM mode) AS commit_mode, u.keyed
    FROM input i JOIN used u ON u.hold_id = i.hold_id LEFT JOIN hold h ON h.id = i.hold_id`.execute(db);
  const byHold = new Map(rows.map((r) => [r.hold_id, r]));
  return attempts.map((a) => {
    const r = byHold.get(a.holdId);
    if (!r) throw new Error(`hold batch lost attempt ${a.holdId}`);
    return {
      used: r.used,
      deviceUsed: r.device_used,
      taken: (r.taken ?? []).map(Number),
      expiresAt: r.expires_at,
      commitMode: r.commit_mode,
      keyed: r.keyed,
    };
  });
}
