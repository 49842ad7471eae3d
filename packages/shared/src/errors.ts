import type { ZodError } from 'zod';
/**
 * The kinds a domain error can be; a kind maps to its transport status in one place each (HTTP_STATUS_OF for the
 * store API and the edge worker, tRPC codes in the BFF).
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

/** The HTTP status each kind answers with (the store API's, and the edge worker's, which words errors the same way). */
export const HTTP_STATUS_OF: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  limit: 409,
  payment: 402,
  throttled: 429,
  unavailable: 503,
};

/**
 * Every code a client can read in an error answer (`error` in the store API's and the BFF's bodies, `domainCode`
 * in a tRPC error's data), in one list: the type of DomainError's `code`, the store API's error schema and its
 * OpenAPI document (components.schemas.ErrorCode). A code not listed here does not typecheck. Alphabetical.
 */
export const ERROR_CODES = [
  'ACCESS_CODES_UNAVAILABLE',
  'ACCESS_CODE_EXPIRED',
  'ACCESS_CODE_FORGED',
  'ACCESS_CODE_MALFORMED',
  'ACCESS_CODE_REQUIRED',
  'ACCESS_CODE_USED',
  'ACCESS_CODE_WRONG_ACCOUNT',
  'ACCESS_CODE_WRONG_EVENT',
  'ACCESS_CODE_WRONG_TIER',
  'ACCOUNT_BLOCKED',
  'ACCOUNT_LIMIT_EXCEEDED',
  'ACTOR_REQUIRED',
  'ADMISSION_REQUIRED',
  'ADMISSION_WRONG_EVENT',
  'ALERT_ENDPOINT_NOT_FOUND',
  'AUDIT_FAILED',
  'BAD_REQUEST',
  'CARD_NOT_ELIGIBLE',
  'CHALLENGE_REQUIRED',
  'CHECKOUT_IN_PROGRESS',
  'CLAIM_TOKEN_EXPIRED',
  'CLAIM_TOKEN_FORGED',
  'CLAIM_TOKEN_INVALID',
  'CLAIM_TOKEN_WRONG_ACCOUNT',
  'CLUSTER_NOT_FOUND',
  'CSRF_HEADER_MISSING',
  'DATABASE_UNAVAILABLE',
  'DATE_RANGE_OUTSIDE_LISTING',
  'DEFERRAL_EXPIRED',
  'DEFERRAL_FORGED',
  'DEFERRAL_MALFORMED',
  'DEFERRAL_WRONG_ACCOUNT',
  'DEFERRAL_WRONG_EVENT',
  'DELIVERY_NOT_DEAD',
  'DEVICE_ID_REQUIRED',
  'DEVICE_LIMIT_EXCEEDED',
  'DRAW_TOO_EARLY',
  'DUPLICATE_SEAT',
  'EDGE_FAULT',
  'EDGE_MISCONFIGURED',
  'EMAIL_TAKEN',
  'EMPTY_BODY',
  'EVENT_CLOSED',
  'EVENT_FORBIDDEN',
  'EVENT_NOT_FOUND',
  'EXTENSION_NOT_OFFERED',
  'FAIRNESS_MODE_CHANGED',
  'FAIRNESS_NOT_SIGNED_OFF',
  'FAULT_NEEDS_SPAWN',
  'FAULT_UNAVAILABLE',
  'FILE_UNREADABLE',
  'GA_QUANTITY_UNAVAILABLE',
  'HOLD_ALREADY_EXTENDED',
  'HOLD_EXPIRED',
  'HOLD_LOST',
  'HOLD_NOT_FOUND',
  'HOLD_NOT_LIVE',
  'HOLD_NOT_OWNED',
  'HOLD_PURCHASED',
  'HOLD_RACE',
  'HOLD_RELEASED',
  'IDEMPOTENCY_KEY_REUSED',
  'IDENTITY_PROVIDER_UNAVAILABLE',
  'INSTRUMENT_LIMIT_EXCEEDED',
  'INTERNAL',
  'INVALID_ACCOUNT_ID',
  'INVALID_ALERT_ENDPOINT',
  'INVALID_AUDIT_QUERY',
  'INVALID_BLOCK',
  'INVALID_BUDGET_INPUT',
  'INVALID_CHALLENGE',
  'INVALID_COUNT',
  'INVALID_CREDENTIALS',
  'INVALID_CRITERIA',
  'INVALID_DELIVERY_QUERY',
  'INVALID_DEVICE_ID',
  'INVALID_EVENT_FILE',
  'INVALID_INPUT',
  'INVALID_JSON',
  'INVALID_ORGANISATION',
  'INVALID_PASSWORD',
  'INVALID_PLAN_INPUT',
  'INVALID_PUBLIC_NOTE',
  'INVALID_QUANTITY',
  'INVALID_QUEUE_COPY',
  'INVALID_QUEUE_SCHEDULE',
  'INVALID_RATE_INPUT',
  'INVALID_RATE_OVERRIDE',
  'INVALID_REASON',
  'INVALID_RELEASE',
  'INVALID_SEATS',
  'INVALID_SIGN_IN',
  'INVALID_TOKEN',
  'INVALID_USER',
  'INVALID_VALID_UNTIL',
  'INVALID_WAITLIST_SETTINGS',
  'INVALID_WEBHOOK_ENDPOINT',
  'INVITATION_EXPIRED',
  'INVITATION_FORGED',
  'INVITATION_MALFORMED',
  'INVITATION_NOT_YET_VALID',
  'INVITATION_REVOKED',
  'INVITATION_WRONG_ACCOUNT',
  'INVITATION_WRONG_EVENT',
  'JOIN_DEFERRED',
  'JOIN_RACE',
  'LAST_ADMIN',
  'LIMIT_RAISED_AFTER_OPEN',
  'LISTING_FIXED',
  'LISTING_FORBIDDEN',
  'LISTING_NOT_FOUND',
  'LOCKED_AFTER_OPEN',
  'LOTTERY_DRAWN',
  'LOTTERY_NOT_CONFIGURED',
  'LOTTERY_REGISTRATION_REQUIRED',
  'MALFORMED_COOKIE',
  'MISSING_TOKEN',
  'NOT_A_LOTTERY_EVENT',
  'NOT_BLOCKED',
  'NOT_FOUND',
  'NOT_REGISTERED',
  'NO_INPUT',
  'NO_SEAT_MAP',
  'OFFER_ALREADY_CLAIMED',
  'OFFER_DECLINED',
  'OFFER_EXPIRED',
  'OFFER_NOT_FOUND',
  'OFFER_NOT_OWNED',
  'OFFER_SEATS_GONE',
  'ONSALE_NOT_IN_FUTURE',
  'ONSALE_NOT_OPEN',
  'ORDER_ALREADY_CANCELLED',
  'ORDER_NOT_FOUND',
  'ORIGIN_UNAVAILABLE',
  'PAYMENT_DECLINED',
  'PAYMENT_GATEWAY_BUSY',
  'PAYMENT_NOT_COMPLETED',
  'POSITION_EXPIRED',
  'POW_EXPIRED',
  'POW_FORGED',
  'POW_MALFORMED',
  'POW_REUSED',
  'POW_UNSOLVED',
  'POW_WRONG_ACCOUNT',
  'POW_WRONG_EVENT',
  'PRESALE_OPENED',
  'PRICE_LEVEL_NOT_FOUND',
  'QUANTITY_ABOVE_LIMIT',
  'QUEUE_HAS_FANS',
  'RATE_LIMITED',
  'REASON_REQUIRED',
  'REGISTRATION_CLOSED',
  'REGISTRATION_NOT_OPEN',
  'REGISTRATION_OPENED',
  'REHEARSALS_UNAVAILABLE',
  'REHEARSAL_FAILED',
  'REHEARSAL_NOT_FOUND',
  'REHEARSAL_NOT_STARTED',
  'ROLE_FORBIDDEN',
  'ROLL_NOT_DUE',
  'ROUTE_NOT_FOUND',
  'SALE_ALREADY_OPEN',
  'SCHEDULE_AFTER_EVENT',
  'SCHEDULE_IN_PAST',
  'SCHEDULE_NOT_FOUND',
  'SCHEDULE_NOT_PENDING',
  'SEATS_IN_USE',
  'SEATS_UNAVAILABLE',
  'SEAT_NOT_FOUND',
  'SEAT_NOT_IN_TIER',
  'SEAT_PICKING_NOT_OPEN',
  'SECTION_IS_GA',
  'SECTION_NEARLY_FULL',
  'SECTION_NOT_FOUND',
  'SECTION_SOLD_OUT',
  'SELF_DISABLE',
  'SELF_ROLE_CHANGE',
  'SERVICE_UNAVAILABLE',
  'SESSION_ENDED',
  'SIGN_IN_REQUIRED',
  'SIGN_IN_THROTTLED',
  'SINGLE_SEAT_LEFT',
  'STALE_EVENT_VERSION',
  'TIER_CLOSED',
  'TIER_DOES_NOT_ROLL',
  'TIER_NOT_FOUND',
  'TIER_NOT_OPEN',
  'TIER_TAKES_NO_CODES',
  'TOKEN_EXPIRED',
  'TOKEN_FORGED',
  'TOKEN_MALFORMED',
  'TOKEN_WRONG_ACCOUNT',
  'TOKEN_WRONG_DEVICE',
  'TOKEN_WRONG_EVENT',
  'TOKEN_WRONG_HOLD',
  'TOKEN_WRONG_KIND',
  'UNSUPPORTED_MEDIA_TYPE',
  'USER_DISABLED',
  'USER_NOT_FOUND',
  'VALIDATION_FAILED',
  'WAITING_ROOM_UNAVAILABLE',
  'WAITLIST_ENTRY_GONE',
  'WAITLIST_WRITE_FAILED',
  'WEBHOOK_DELIVERY_NOT_FOUND',
  'WEBHOOK_ENDPOINT_INACTIVE',
  'WEBHOOK_ENDPOINT_NOT_FOUND',
] as const;

/** A stable error code clients switch on. */
export type ErrorCode = (typeof ERROR_CODES)[number];

const errorCodes: ReadonlySet<string> = new Set(ERROR_CODES);
/** Whether `code` is in the registry (ERROR_CODES). */
export const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && errorCodes.has(code);

/** A rule of the domain was not met. `code` is stable and is what clients switch on. */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: ErrorCode,
    message: string,
    readonly details: { field?: string; [k: string]: unknown } = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (code: ErrorCode, message: string, field?: string) =>
  new DomainError('not_found', code, message, field ? { field } : {});
export const invalid = (code: ErrorCode, message: string, field: string, extra: Record<string, unknown> = {}) =>
  new DomainError('invalid', code, message, { field, ...extra });
export const conflict = (code: ErrorCode, message: string, extra: Record<string, unknown> = {}) =>
  new DomainError('conflict', code, message, extra);

/** Formats zod issues as `path: message` lines, each naming the field at fault. */
export function formatIssues(error: ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}
