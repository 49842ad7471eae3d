import type { QueueStatusState } from './edge.js';

/** The fan-facing words for each queue state: prewritten, so nobody improvises them at 10:00:00 on the day. */
export type QueueCopy = Record<QueueStatusState, string>;

export const DEFAULT_QUEUE_COPY: QueueCopy = {
  WAITING: 'You are in line. Keep this page open; we will let you in when it is your turn. Refreshing does not move you up.',
  PAUSED: 'The line is paused for a moment. You keep your place; nobody is being let in ahead of you.',
  ADMITTED: 'It is your turn. You have 10 minutes to pick your seats.',
  LAST_CHANCE: 'All seats are currently held by other fans. Some may come back if they are not paid for; stay in line.',
  SOLD_OUT: 'This event is sold out. Join the waitlist to be offered seats that come back, in the order fans joined.',
};

/** The event's copy: its own words where the promoter gave them, the defaults elsewhere. */
export function queueCopy(overrides: Partial<QueueCopy> | null | undefined): QueueCopy {
  return { ...DEFAULT_QUEUE_COPY, ...(overrides ?? {}) };
}
