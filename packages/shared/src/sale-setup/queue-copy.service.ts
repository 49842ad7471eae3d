import type { Trx, Db } from '../db/connect.js';
import { conflict, invalid, notFound } from '../errors.js';
import { DEFAULT_QUEUE_COPY_BY_LANGUAGE, FAN_LANGUAGES, QUEUE_STATES, type FanLanguage, type QueueCopy } from '../queue/copy.js';
import type { QueueStatusState } from '../queue/edge.js';
import { queueCopyEditSchema } from '../warroom/warroom.schema.js';
import * as repo from './configure.repository.js';
import { insertAudit } from '../audit/index.js';
import { isUuid } from '../ids.js';

// The words waiting fans read in each queue state, edited live from the war room: English is
// the event's queueCopy, the other fan languages its look's copy, as the event file has them. A save is one more
// version of the event (an edit form open elsewhere is then refused as stale rather than overwriting it), audited
// with the words before and after; each store-API instance re-reads the words with the watermark (every 500 ms),
// so a fan reads them on their next poll.

/** One state's words in one language: what fans read, and whether the event has its own words or the default. */
export interface StateWords {
  text: string;
  custom: boolean;
  defaultText: string;
}

export interface QueueCopyView {
  eventId: string;
  version: number;
  /** Per fan language, per state. */
  words: Record<FanLanguage, Record<QueueStatusState, StateWords>>;
}

type Overrides = Partial<Record<QueueStatusState, string>>;

function overridesOf(
  row: { queue_copy: unknown; look: { copy?: Partial<Record<string, Overrides>> } | null },
  lang: FanLanguage,
): Overrides {
  if (lang === 'en') return (row.queue_copy as Overrides | null) ?? {};
  return row.look?.copy?.[lang] ?? {};
}

function viewOf(row: NonNullable<Awaited<ReturnType<typeof repo.findEventRow>>>): QueueCopyView {
  const words = {} as QueueCopyView['words'];
  for (const lang of FAN_LANGUAGES) {
    const own = overridesOf(row, lang);
    const defaults = DEFAULT_QUEUE_COPY_BY_LANGUAGE[lang];
    words[lang] = Object.fromEntries(
      QUEUE_STATES.map((s) => [
        s,
        { text: own[s] ?? defaults[s], custom: own[s] !== undefined && own[s] !== defaults[s], defaultText: defaults[s] },
      ]),
    ) as Record<QueueStatusState, StateWords>;
  }
  return { eventId: row.id, version: row.version, words };
}

/** The event's words per state and language, with its version (the edit is saved against it). EVENT_NOT_FOUND. */
export async function getQueueCopy(db: Db | Trx, eventId: string): Promise<QueueCopyView> {
  const row = isUuid(eventId) ? await repo.findEventRow(db, eventId) : undefined;
  if (!row) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return viewOf(row);
}

/**
 * Saves the words fans read per state and language (every state given; words equal to the default are stored as
 * the default, so a later change of the defaults reaches them), against the version they were edited from
 * (STALE_EVENT_VERSION otherwise, nothing written). Audited `event.queue_copy_changed` with the states changed,
 * before and after, and the reason. Returns the new view. Runs in the caller's transaction.
 */
export async function setQueueCopy(trx: Trx, input: unknown, actor: string): Promise<QueueCopyView & { changed: number }> {
  const parsed = queueCopyEditSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid('INVALID_QUEUE_COPY', issue.message, issue.path.join('.') || 'words');
  }
  const i = parsed.data;
  const row = isUuid(i.eventId) ? await repo.lockEvent(trx, i.eventId) : undefined;
  if (!row) throw notFound('EVENT_NOT_FOUND', `no event ${i.eventId}`, 'eventId');
  if (row.version !== i.expectedVersion)
    throw conflict(
      'STALE_EVENT_VERSION',
      `someone changed this event since you opened the words (you edited version ${i.expectedVersion}; it is now version ${row.version}): reload and make your change again`,
      {
        field: 'version',
        expectedVersion: i.expectedVersion,
        currentVersion: row.version,
      },
    );
  const before = viewOf(row);
  const changes: { language: FanLanguage; state: QueueStatusState; before: string; after: string }[] = [];
  const next = {} as Record<FanLanguage, Overrides>;
  for (const lang of FAN_LANGUAGES) {
    const defaults: QueueCopy = DEFAULT_QUEUE_COPY_BY_LANGUAGE[lang];
    const given = i.words[lang] ?? {};
    const own: Overrides = {};
    for (const s of QUEUE_STATES) {
      const text = given[s] ?? before.words[lang][s].text;
      if (text !== defaults[s]) own[s] = text;
      if (text !== before.words[lang][s].text) changes.push({ language: lang, state: s, before: before.words[lang][s].text, after: text });
    }
    next[lang] = own;
  }
  if (changes.length === 0) return { ...before, changed: 0 };
  const look = { ...(row.look ?? {}) } as { copy?: Record<string, Overrides> } & Record<string, unknown>;
  const copy: Record<string, Overrides> = {};
  for (const lang of FAN_LANGUAGES) if (lang !== 'en' && Object.keys(next[lang]).length > 0) copy[lang] = next[lang];
  if (Object.keys(copy).length > 0) look.copy = copy;
  else delete look.copy;
  const version = await repo.updateEvent(trx, row.id, {
    queue_copy: Object.keys(next.en).length > 0 ? JSON.stringify(next.en) : null,
    look: Object.keys(look).length > 0 ? JSON.stringify(look) : null,
  });
  await insertAudit(trx, {
    actor,
    action: 'event.queue_copy_changed',
    eventId: row.id,
    details: { fromVersion: row.version, version, reason: i.reason, changes },
  });
  const after = await repo.findEventRow(trx, row.id);
  return { ...viewOf(after!), changed: changes.length };
}
