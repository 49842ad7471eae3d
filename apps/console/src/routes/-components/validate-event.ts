import { eventFileSchema, type EventFile } from '@onsale/shared/events/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { fileFromDraft, type EventDraft } from './event-draft';

/**
 * Checks the form with the schema the BFF and the CLI use. `errors` holds every problem at its field path; inputs
 * that are not even numbers say so in plain words (the schema alone would say "NaN").
 */
export function validateEventDraft(draft: EventDraft): { file: EventFile; errors: Record<string, string> } {
  const { file, problems } = fileFromDraft(draft);
  const parsed = eventFileSchema.safeParse(file);
  const errors = parsed.success ? {} : fieldErrors(parsed.error);
  return { file, errors: { ...errors, ...problems } };
}
