// The store API as the page uses it: same origin, the fan's headers on every call, and every answer classified so
// that a busy or unreachable site reads as "still in line" rather than an error page.
import type { ErrorCode } from '@onsale/shared';
import { deviceId, type Account } from './session';
import type { FanLanguage } from './i18n';

export interface ApiError {
  error: ErrorCode;
  message: string;
  field?: string;
  [k: string]: unknown;
}

export type ApiResult<T> =
  | { kind: 'ok'; status: number; body: T; retryAfterSeconds: number | null; language: string | null }
  /** A 4xx the fan can act on (or the page handles). */
  | { kind: 'refused'; status: number; body: ApiError; retryAfterSeconds: number | null }
  /** 429, 503, another 5xx, or no answer at all: nothing is lost; ask again after retryAfterSeconds. */
  | { kind: 'busy'; status: number; body: ApiError | null; retryAfterSeconds: number; offline: boolean };

/** The server's clock minus ours (ms), from each answer's Date header: countdowns use the server's time. */
let skewMs = 0;
export const serverNow = () => Date.now() + skewMs;

export interface ApiContext {
  account: Account | null;
  language: FanLanguage;
  /** Called when the account token is refused (expired or revoked): the page asks the fan to sign in again. */
  onSignedOut?: () => void;
}

export async function call<T>(
  ctx: ApiContext,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { accept: 'application/json', 'accept-language': ctx.language, ...opts.headers };
  if (ctx.account) headers.authorization = `Bearer ${ctx.account.token}`;
  headers['x-device-id'] ??= deviceId();
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
      credentials: 'same-origin',
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    return { kind: 'busy', status: 0, body: null, retryAfterSeconds: 5, offline: true };
  }
  const date = res.headers.get('date');
  if (date) {
    const at = Date.parse(date);
    // Second resolution: only correct clocks that are off by more than a second and a half.
    if (Number.isFinite(at) && Math.abs(at + 500 - Date.now() - skewMs) > 1500) skewMs = at + 500 - Date.now();
  }
  const retryHeader = res.headers.get('retry-after');
  const retryAfter = retryHeader !== null && /^\d+$/.test(retryHeader.trim()) ? Number(retryHeader) : null;
  let body: unknown;
  try {
    body = res.status === 204 ? null : await res.json();
  } catch {
    body = null;
  }
  if (res.ok)
    return {
      kind: 'ok',
      status: res.status,
      body: body as T,
      retryAfterSeconds: retryAfter,
      language: res.headers.get('content-language'),
    };
  const err = (
    body && typeof body === 'object' && 'error' in body ? body : { error: `HTTP_${res.status}`, message: res.statusText }
  ) as ApiError;
  if (res.status === 429 || res.status >= 500)
    return { kind: 'busy', status: res.status, body: err, retryAfterSeconds: retryAfter ?? 5, offline: false };
  if (res.status === 401 && err.field === 'authorization') ctx.onSignedOut?.();
  return { kind: 'refused', status: res.status, body: err, retryAfterSeconds: retryAfter };
}

/**
 * How long to wait before asking again: what the server said (Retry-After) plus up to a quarter more at random,
 * so a crowd told the same number does not come back in the same second; four times longer (at most 2 min, never
 * shorter than the server said) while the page is hidden.
 */
export function nextPollMs(retryAfterSeconds: number, hidden: boolean, random: () => number = Math.random): number {
  const base = Math.max(1, retryAfterSeconds) * 1000;
  const jittered = base * (1 + 0.25 * random());
  return hidden ? Math.max(jittered, Math.min(base * 4, 120_000)) : jittered;
}
