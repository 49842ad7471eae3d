import { sql, type Insertable } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { DeliveryStatus, WebhookEndpointsTable } from './notify.table.js';

// All SQL of webhook endpoints and deliveries, including the graphile-worker jobs that carry deliveries (enqueued
// by SQL so they commit or roll back with the rows that cause them).

/** The graphile-worker task that makes one delivery's HTTP request. */
export const WEBHOOK_DELIVER_TASK = 'webhook_deliver';

/**
 * Deliveries to one endpoint run in this many graphile named queues ("lanes"; a named queue runs one job at a time),
 * so one endpoint never occupies more than this many worker slots however slow it answers, and a healthy endpoint
 * still gets this many requests in flight.
 */
export const WEBHOOK_LANES_PER_ENDPOINT = 4;

/** The lane (graphile queue name) of a delivery, `webhook:<endpoint>:<delivery id mod lanes>`, built in SQL. */
const laneSql = (endpointId: string, deliveryId: string) =>
  sql.raw(`'webhook:' || ${endpointId} || ':' || (${deliveryId} % ${WEBHOOK_LANES_PER_ENDPOINT})`);

/** Stores a new endpoint, returning every column (the caller shows the secret once). */
export function insertEndpoint(db: Db | Trx, row: Insertable<WebhookEndpointsTable>) {
  return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Every endpoint, oldest first: few rows (operators' receivers), so no paging. */
export function findEndpoints(db: Db | Trx) {
  return db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Turns an endpoint on or off; undefined when there is no such endpoint. */
export function updateEndpointActive(db: Db | Trx, id: string, active: boolean) {
  return db.updateTable('webhook_endpoints').set({ active }).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Newest deliveries first (the ones an operator is looking for), filtered by endpoint and status. */
export function findDeliveries(db: Db | Trx, q: { endpointId?: string; status?: DeliveryStatus; limit: number }) {
  let query = db.selectFrom('webhook_deliveries').selectAll();
  if (q.endpointId !== undefined) query = query.where('endpoint_id', '=', q.endpointId);
  if (q.status !== undefined) query = query.where('status', '=', q.status);
  return query.orderBy('id', 'desc').limit(q.limit).execute();
}

/** One delivery, for redeliver's answer and its reasons for refusing. */
export function findDelivery(db: Db | Trx, id: number) {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * One delivery row per active endpoint of the listing (or of every listing) and one job per row, in a single
 * statement: the cost per chunk is one round trip whatever the number of endpoints, and none when there is none
 * (add_jobs is only called when a row was inserted).
 */
export async function insertDeliveriesWithJobs(
  trx: Trx,
  b: { listingId: string; availabilityId: number | null; notificationIds: number[] },
): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    WITH d AS (
      INSERT INTO webhook_deliveries (endpoint_id, availability_id, notification_ids)
      SELECT e.id, ${b.availabilityId}::bigint, ${b.notificationIds}::bigint[]
      FROM webhook_endpoints e
      WHERE e.active AND (e.listing_id = ${b.listingId}::uuid OR e.listing_id IS NULL)
      RETURNING id, endpoint_id
    ), specs AS (
      SELECT array_agg(ROW(${WEBHOOK_DELIVER_TASK}::text, json_build_object('deliveryId', d.id), ${laneSql('d.endpoint_id', 'd.id')},
                           NULL::timestamptz, e.max_attempts, NULL::text, NULL::int, NULL::text[])::graphile_worker.job_spec) AS specs
      FROM d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      HAVING count(*) > 0
    ), jobs AS (
      SELECT count(*) AS n FROM specs, LATERAL graphile_worker.add_jobs(specs.specs) j
    )
    SELECT d.id FROM d CROSS JOIN jobs ORDER BY d.id`.execute(trx);
  return rows.map((r) => r.id);
}

/**
 * Puts a dead delivery back to PENDING with a fresh attempt budget and enqueues its job, in one statement (so two
 * operators redelivering at once enqueue it once). Undefined when it is not DEAD or its endpoint is inactive.
 */
export async function requeueDeadDelivery(db: Db | Trx, id: number) {
  const { rows } = await sql<{ id: number }>`
    WITH d AS (
      UPDATE webhook_deliveries d SET status = 'PENDING', attempts = 0, updated_at = now()
      FROM webhook_endpoints e
      WHERE d.id = ${id} AND d.status = 'DEAD' AND e.id = d.endpoint_id AND e.active
      RETURNING d.id, d.endpoint_id, e.max_attempts
    )
    SELECT d.id, (graphile_worker.add_job(${WEBHOOK_DELIVER_TASK}, json_build_object('deliveryId', d.id),
                    queue_name => ${laneSql('d.endpoint_id', 'd.id')}, max_attempts => d.max_attempts)).id AS job_id
    FROM d`.execute(db);
  return rows[0];
}

/** A delivery with what sending it needs: its endpoint, and when its availability event happened (for latency). */
export async function loadDeliveryForSend(db: Db, id: number) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .leftJoin('availability_events as a', 'a.id', 'd.availability_id')
    .select([
      'd.id',
      'd.endpoint_id',
      'd.availability_id',
      'd.notification_ids',
      'd.status',
      'd.attempts',
      'e.url',
      'e.secret',
      'e.active',
      'e.max_attempts',
      'e.timeout_ms',
      'a.created_at as availability_created_at',
    ])
    .where('d.id', '=', id)
    .executeTakeFirst();
}

/**
 * The circuit breaker's gate. Closed (no recent failure): send. Open (open_until in the future): do not send.
 * Half-open (failures, but open_until has passed): exactly one caller wins the probe, by pushing open_until past
 * its own request's timeout so every other caller, in any worker process, sees the circuit open meanwhile.
 */
export async function passCircuit(db: Db, endpointId: string): Promise<{ send: boolean; openUntil: Date | null; failures: number }> {
  const { rows } = await sql<{ probing: boolean; consecutive_failures: number; open_until: Date | null }>`
    WITH probe AS (
      UPDATE webhook_endpoints SET open_until = now() + make_interval(secs => timeout_ms / 1000.0 + 5)
      WHERE id = ${endpointId} AND consecutive_failures > 0 AND (open_until IS NULL OR open_until <= now())
      RETURNING open_until
    )
    SELECT EXISTS (SELECT 1 FROM probe) AS probing, e.consecutive_failures,
           coalesce((SELECT open_until FROM probe), e.open_until) AS open_until
    FROM webhook_endpoints e WHERE e.id = ${endpointId}`.execute(db);
  const r = rows[0];
  if (!r) return { send: false, openUntil: null, failures: 0 };
  return { send: r.probing || r.consecutive_failures === 0, openUntil: r.open_until, failures: r.consecutive_failures };
}

/**
 * A 2xx: the delivery is done and the endpoint healthy again. The endpoint row is written only when it was
 * failing, so concurrent successes to one endpoint do not queue on its row lock.
 */
export async function markDelivered(db: Db, id: number, statusCode: number): Promise<{ deliveredAt: Date } | undefined> {
  const { rows } = await sql<{ delivered_at: Date }>`
    WITH d AS (
      UPDATE webhook_deliveries SET status = 'DELIVERED', attempts = attempts + 1, last_status_code = ${statusCode},
        delivered_at = now(), updated_at = now()
      WHERE id = ${id} AND status IN ('PENDING', 'RETRYING')
      RETURNING endpoint_id, delivered_at
    ), e AS (
      UPDATE webhook_endpoints SET consecutive_failures = 0, open_until = NULL
      WHERE id = (SELECT endpoint_id FROM d) AND (consecutive_failures <> 0 OR open_until IS NOT NULL)
    )
    SELECT delivered_at FROM d`.execute(db);
  return rows[0] ? { deliveredAt: rows[0].delivered_at } : undefined;
}

/**
 * A failed request (non-2xx, timeout, network error): counts the attempt, records why, and opens the endpoint's
 * circuit for min(2^failures, 300) s. DEAD once the attempts reach the endpoint's max_attempts, else RETRYING.
 */
export async function recordFailure(
  db: Db,
  id: number,
  endpointId: string,
  f: { statusCode: number | null; error: string },
): Promise<{ status: DeliveryStatus; attempts: number; openUntil: Date | null } | undefined> {
  const { rows } = await sql<{ status: DeliveryStatus; attempts: number; open_until: Date | null }>`
    WITH e AS (
      UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1,
        open_until = now() + make_interval(secs => least(power(2, least(consecutive_failures + 1, 16)), 300))
      WHERE id = ${endpointId}
      RETURNING max_attempts, open_until
    )
    UPDATE webhook_deliveries d SET attempts = d.attempts + 1, last_status_code = ${f.statusCode}, last_error = ${f.error},
      updated_at = now(),
      status = CASE WHEN d.attempts + 1 >= (SELECT max_attempts FROM e) THEN 'DEAD' ELSE 'RETRYING' END
    WHERE d.id = ${id} AND d.status IN ('PENDING', 'RETRYING')
    RETURNING d.status, d.attempts, (SELECT open_until FROM e) AS open_until`.execute(db);
  const r = rows[0];
  return r ? { status: r.status, attempts: r.attempts, openUntil: r.open_until } : undefined;
}

/** Gives a delivery up without a request (endpoint disabled, tries used up while its circuit stayed open). */
export async function markDead(db: Db, id: number, reason: string): Promise<boolean> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'DEAD', last_error: reason, updated_at: new Date() })
    .where('id', '=', id)
    .where('status', 'in', ['PENDING', 'RETRYING'])
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Notes why a try went by without a request, keeping the delivery's status and attempt count. */
export async function noteSkipped(db: Db, id: number, reason: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ last_error: reason, updated_at: new Date() }).where('id', '=', id).execute();
}
