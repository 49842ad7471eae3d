// The bounds an event file's settings are checked against (events/events.schema.ts), shared with the domains that
// apply them (inventory/ga.ts, queue/edge.ts). No imports: the edge Worker and the fans' page bundle them.

/** Shards a general-admission section gets when its event file does not say. */
export const DEFAULT_GA_SHARDS = 16;
/** Upper bound on shards per section (a hold that must span shards locks all of them). */
export const MAX_GA_SHARDS = 256;

/** The longest extension an event may give a hold (the event file's holds.extensionSeconds). */
export const MAX_HOLD_EXTENSION_SECONDS = 1800;

/** The languages fans' pages and queue messages come in; the first is the default. */
export const FAN_LANGUAGES = ['en', 'es'] as const;
export type FanLanguage = (typeof FAN_LANGUAGES)[number];
export const DEFAULT_FAN_LANGUAGE: FanLanguage = 'en';
