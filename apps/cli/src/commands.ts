import { readFile } from 'node:fs/promises';
import { createDb, migrateToLatest, type Db } from '@onsale/shared/db';
import {
  eventCreateWarnings,
  getEvent,
  getSections,
  listEvents,
  parseEventFile,
  parseNewEventFile,
  type EventSpec,
} from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { getInventoryCounts } from '@onsale/shared/inventory';
import { resolveDatabase } from './database.js';
import { CliError } from './errors.js';

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

const json = (v: unknown) => JSON.stringify(v, null, 2);

/** Opens the configured database for one command and always closes it (pool first, then any embedded server). */
export async function withDatabase<T>(databaseUrl: string | undefined, fn: (db: Db) => Promise<T>): Promise<T> {
  const target = await resolveDatabase(databaseUrl);
  const db = createDb(target.url, { max: 4, applicationName: 'onsale-cli' });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
    await target.release();
  }
}

export async function migrate(databaseUrl: string | undefined, io: Io): Promise<void> {
  await withDatabase(databaseUrl, async (db) => {
    const { results = [] } = await migrateToLatest(db);
    if (results.length === 0) io.out('database is up to date; no migrations to apply');
    for (const r of results) io.out(`applied ${r.migrationName}`);
    // Card fingerprints written before they were keyed are keyed in place with this install's secret.
    const secret = (await import('./env.js')).cliSecrets().cardFingerprintSecret;
    const { CardFingerprints, rekeyLegacyCardFingerprints } = await import('@onsale/shared/checkout');
    if (secret) {
      const n = await rekeyLegacyCardFingerprints(db, new CardFingerprints(secret));
      if (n > 0) io.out(`keyed ${n} card fingerprints written before fingerprints were keyed`);
    } else
      io.err(
        'CARD_FINGERPRINT_SECRET is not set: card fingerprints written before they were keyed stay marked until the store API starts with it',
      );
  });
}

/** Reads an event file's JSON (not yet checked against the schema). */
async function readEventJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError('FILE_UNREADABLE', `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CliError('INVALID_JSON', `${path} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Reads and validates an event file without touching the database. */
export async function readEventFile(path: string): Promise<EventSpec> {
  return parseEventFile(await readEventJson(path));
}

/**
 * Creates the event of an event file. An operator tool: unless `signOff` is false the actor's sign-off of the
 * fairness mode is recorded with it (an event that is not signed off does not open). Refused like the console's
 * form: a show time that has passed, an on-sale more than 5 minutes ago (EVENT_TIME_PASSED, at the field); a free
 * price level and a missing sign-off are created, with a warning on stderr.
 */
export async function eventCreate(
  databaseUrl: string | undefined,
  file: string,
  io: Io,
  opts: { actor: string; signOff: boolean; now?: Date } = { actor: 'cli', signOff: true },
): Promise<void> {
  const spec = parseNewEventFile(await readEventJson(file), opts.now ?? new Date());
  const created = await withDatabase(databaseUrl, (db) =>
    db.transaction().execute((trx) => createEvent(trx, spec, opts.actor, { signOff: opts.signOff })),
  );
  for (const w of eventCreateWarnings(spec, { signOff: opts.signOff })) io.err(`warning ${w.code} (${w.path}): ${w.message}`);
  io.out(json({ ...created, signedOff: opts.signOff }));
}

/** An event's settings, its sections with prices, and live inventory counts (read-time hold expiry). */
export async function describeEvent(db: Db, id: string) {
  const event = await getEvent(db, id);
  const [sections, counts] = await Promise.all([getSections(db, event.id), getInventoryCounts(db, event.id, event.capacity)]);
  const bySection = new Map(counts.sections.map((s) => [s.code, s]));
  return {
    event,
    inventory: { capacity: counts.capacity, available: counts.available, held: counts.held, sold: counts.sold, drift: counts.drift },
    sections: sections.map((s) => {
      const c = bySection.get(s.code);
      return { ...s, available: c?.available ?? 0, held: c?.held ?? 0, sold: c?.sold ?? 0 };
    }),
  };
}

export async function eventShow(databaseUrl: string | undefined, id: string, io: Io): Promise<void> {
  io.out(json(await withDatabase(databaseUrl, (db) => describeEvent(db, id))));
}

export async function eventList(databaseUrl: string | undefined, io: Io): Promise<void> {
  const events = await withDatabase(databaseUrl, (db) => listEvents(db));
  io.out(
    json(
      events.map((e) => ({
        id: e.id,
        name: e.name,
        venueName: e.venueName,
        onsaleAt: e.onsaleAt,
        startsAt: e.startsAt,
        capacity: e.capacity,
      })),
    ),
  );
}
