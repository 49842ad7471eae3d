import { DomainError } from '../errors.js';

/**
 * Refuses a fan account an operator blocked from the event (the store API's join, holds and checkout):
 * ACCOUNT_BLOCKED, 403, at `authorization` (the account token names the account).
 */
export function assertNotBlocked(blocked: ReadonlySet<string>, accountId: string): void {
  if (blocked.has(accountId)) throw accountBlocked();
}

export const accountBlocked = () =>
  new DomainError('forbidden', 'ACCOUNT_BLOCKED', 'this account is blocked from this event by the organiser; contact their fan support', {
    field: 'authorization',
  });

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { findBlockedAccounts } from './events.repository.js';
