import { eventFileSchema, pastTimeIssues, type EventFile } from '@onsale/shared/sale-setup/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { fileFromDraft, type EventDraft } from './event-draft';

/**
 * Checks the form with the schema the BFF and the CLI use. `errors` holds every problem at its field path; inputs
 * that are not even numbers say so in plain words (the schema alone would say "NaN"). For a new event
 * (`newEvent`), times that have passed at `now` too, as the BFF refuses them (EVENT_TIME_PASSED).
 */
export function validateEventDraft(
  draft: EventDraft,
  opts: { newEvent?: boolean; now?: Date } = {},
): { file: EventFile; errors: Record<string, string> } {
  const now = opts.now ?? new Date();
  const { file, problems } = fileFromDraft(draft, now);
  const parsed = eventFileSchema.safeParse(file);
  const errors = parsed.success ? {} : fieldErrors(parsed.error);
  const past = opts.newEvent ? Object.fromEntries(pastTimeIssues(file, now).map((i) => [i.path, i.message])) : {};
  return { file, errors: { ...past, ...errors, ...problems } };
}
