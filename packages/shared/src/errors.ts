/**
 * The kinds a domain error can be; each app maps a kind to its own transport status in one place
 * (HTTP in the store API, tRPC codes in the BFF).
 */
export type ErrorKind =
  | 'invalid' // bad input: names the field
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict' // state does not allow it now
  | 'gone' // expired
  | 'limit' // a per-account / per-instrument limit
  | 'payment' // the payment was declined
  | 'throttled' // too many attempts: retry after `details.retryAfterSeconds`
  | 'unavailable'; // a dependency is saturated; retry later

/** A rule of the domain was not met. `code` is stable and is what clients switch on. */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details: { field?: string; [k: string]: unknown } = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (code: string, message: string, field?: string) =>
  new DomainError('not_found', code, message, field ? { field } : {});
export const invalid = (code: string, message: string, field: string, extra: Record<string, unknown> = {}) =>
  new DomainError('invalid', code, message, { field, ...extra });
export const conflict = (code: string, message: string, extra: Record<string, unknown> = {}) =>
  new DomainError('conflict', code, message, extra);
