import { sql } from 'kysely';
import type { Trx } from '../db/connect.js';

/** A seat set aside for the waitlist (in a release's pool or an offer's reserve), with what matching reads. */
export interface PoolSeat {
  id: number;
  sectionCode: string;
  rowIndex: number;
  seatNumber: number;
  priceLevel: string;
  priceCents: number;
  qualityRank: number;
}

/** The seats still set aside under a waitlist hold, with their prices, locked for this transaction. */
export async function poolSeats(trx: Trx, holdId: string): Promise<PoolSeat[]> {
  const { rows } = await sql<PoolSeat>`
    SELECT s.id, s.section_code AS "sectionCode", s.row_index AS "rowIndex", s.seat_number AS "seatNumber",
           c.price_level AS "priceLevel", p.price_cents AS "priceCents", c.quality_rank AS "qualityRank"
    FROM seats s
    JOIN sections c ON c.event_id = s.event_id AND c.code = s.section_code
    JOIN price_levels p ON p.event_id = c.event_id AND p.code = c.price_level
    WHERE s.hold_id = ${holdId} AND s.status = 'HELD'
    ORDER BY s.id
    FOR UPDATE OF s`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
