import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Checkouts the payment gateway failed (it refused for load, errored or timed out): nothing was charged and the
 * attempt row is removed so the fan can retry with the same key, so until now they left no trace the war room or
 * the controller could count. Each store-API instance counts them per event in memory and adds them to the
 * minute's admission row, as it does hold outcomes. A card declined by its issuer is the fan's outcome, recorded
 * on its attempt (PAYMENT_DECLINED), and is not one of these.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE admission_minutes ADD COLUMN checkout_gateway_failures integer NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE admission_minutes DROP COLUMN checkout_gateway_failures`.execute(db);
}
