import type { ColumnType, Generated } from 'kysely';

/** A shard of a general-admission counter: available + held + sold = capacity (a CHECK in the database). */
export interface GaShardsTable {
  event_id: string;
  section_code: string;
  shard: number;
  capacity: number;
  available: number;
  /** Units taken by holds and not yet given back; units of lapsed holds stay here until reclaimed. */
  held: Generated<number>;
  sold: Generated<number>;
  /** The presale tier the shard's units belong to; null when the event has no tiers. */
  allocation: ColumnType<string | null, string | null | undefined, string | null>;
}

/** HELD: taken by the hold (live while the hold is); SOLD: paid for; RETURNED: back in the shard's `available`. */
export type GaUnitState = 'HELD' | 'SOLD' | 'RETURNED';

/** A hold's units in one shard: a GA hold is one row per shard it took units from. */
export interface GaHoldUnitsTable {
  hold_id: string;
  event_id: string;
  section_code: string;
  shard: number;
  quantity: number;
  state: Generated<GaUnitState>;
}
