// One event's reconciliation (rule 7 in docs/architecture.md): what reconcile.ts counts and
// reconcile.repository.ts keeps. Types only.

export interface ReconciliationResult {
  eventId: string;
  capacity: number;
  available: number;
  held: number;
  sold: number;
  /** available + held + sold - capacity (must be 0). */
  drift: number;
  /** sold seats - seats in confirmed orders (must be 0). */
  orderDrift: number;
  /** Lapsed holds whose rows the sweeper tidied (cosmetic: expiry is a read-time predicate). */
  expiredSwept: number;
  /** Presale tiers whose seats do not add up to their capacity (available + held + sold = capacity per tier): code -> drift. */
  tierDrift: Record<string, number>;
}
