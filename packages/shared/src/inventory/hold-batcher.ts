import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { GroupCommit } from '../db/group-commit.js';
import { commitModeExpression, setCommitMode, type HoldCommit } from './hold-commit.js';
import { attemptHold, type HoldAttempt, type HoldAttemptResult } from './holds.repository.js';

export type AttemptResult = HoldAttemptResult;

/**
 * Hold attempts under load: attempts arriving within a few milliseconds share one statement and one commit
 * (each still all-or-nothing, under its own account's lock), so the cost of a round trip and a commit is paid
 * once per batch instead of once per fan (a GroupCommit). Two rules keep a batch exact:
 *  - one attempt per (event, account) and per (event, device) in flight at a time: a second waits for the next
 *    batch, so its count sees the first (a statement cannot see its own writes);
 *  - the seats of the attempts in a batch are disjoint: the hold service claims a block in memory before it
 *    attempts it, and the batcher does not mix attempts that share a seat.
 * Account locks are taken in account order, then device locks in device order, so two batches never wait on
 * each other in a cycle. Each attempt's Idempotency-Key is written with its hold, in the batch's statement (an
 * attempt whose key has a hold already does nothing and answers with that hold); a batch that fails as a whole (a deadlock with another process, say) is retried one
 * attempt at a time.
 */
export class HoldBatcher {
  private readonly commit: GroupCommit<HoldAttempt, AttemptResult>;

  constructor(db: Db, commit: HoldCommit, opts: { maxBatch?: number; maxWaitMs?: number; maxConcurrentBatches?: number } = {}) {
    this.commit = new GroupCommit((attempts) => runBatch(db, attempts, commit), {
      maxBatch: opts.maxBatch ?? 100,
      maxWaitMs: opts.maxWaitMs ?? 2,
      maxConcurrentBatches: opts.maxConcurrentBatches ?? 2,
      retryAlone: true,
      keys: (a) => [
        `${a.eventId}\u0000${a.accountId}`,
        // Devices share the account keys' space under a prefix no account id has.
        ...(a.deviceHash ? [`${a.eventId}\u0000\u0001device:${a.deviceHash}`] : []),
        ...a.seatIds.map((id) => `${a.eventId}\u0000\u0002seat:${id}`),
      ],
    });
  }

  attempt(a: HoldAttempt): Promise<AttemptResult> {
    return this.commit.submit(a);
  }
}

/**
 * Releases under load: those arriving within a few milliseconds share one transaction (`releaseMany` checks and
 * answers each alone), so a stampede of releases costs a handful of statements and one commit per batch instead
 * of per fan (a GroupCommit). A hold appears in one batch at a time (a second release of it waits for the next). A
 * batch whose transaction fails as a whole (a deadlock with another process, say) is retried one release at a time.
 */
export class ReleaseBatcher<R extends { holdId: string }, H> {
  private readonly commit: GroupCommit<R, H>;

  constructor(db: Db, commit: HoldCommit, releaseMany: (trx: Trx, reqs: R[]) => Promise<(H | Error)[]>) {
    this.commit = new GroupCommit(
      (reqs) =>
        db.transaction().execute(async (trx) => {
          await setCommitMode(trx, commit);
          return releaseMany(trx, reqs);
        }),
      {
        maxBatch: 100,
        maxWaitMs: 2,
        maxConcurrentBatches: 2,
        retryAlone: true,
        keys: (r) => [r.holdId],
      },
    );
  }

  release(req: R): Promise<H> {
    return this.commit.submit(req);
  }
}

/** The batch statement: attemptHold's rules, for many attempts at once. Results in the order of `attempts`. */
export async function runBatch(db: Db, attempts: HoldAttempt[], commit: HoldCommit): Promise<AttemptResult[]> {
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
