// Identifiers: the one UUID check every domain uses before a lookup, so a malformed id reads as "not found"
// rather than reaching PostgreSQL as an invalid uuid. No imports: the bottom layer of the domain.

/** A UUID in its canonical text form (any version, either case). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `s` is a UUID in its canonical text form. */
export const isUuid = (s: string): boolean => UUID_PATTERN.test(s);
