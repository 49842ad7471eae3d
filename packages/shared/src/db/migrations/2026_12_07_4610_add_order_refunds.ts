import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * An order's refund: when its money went back through the payment provider (`refunded_at`). Only a cancelled order
 * is refunded (its seats went back first), which the check keeps true whatever writes the row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE orders
      ADD COLUMN refunded_at timestamptz,
      ADD CONSTRAINT orders_refund_after_cancel CHECK (refunded_at IS NULL OR status = 'CANCELLED')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE orders DROP CONSTRAINT orders_refund_after_cancel, DROP COLUMN refunded_at`.execute(db);
}
