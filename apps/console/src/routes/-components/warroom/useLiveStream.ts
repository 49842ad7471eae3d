import { useEffect, useRef, useState } from 'react';
import { useNavigate, useRouterState } from '@tanstack/react-router';
import { trpcCodeOf } from '../../../trpc';

/** How the war room's stream stands, as the page tells the operator. */
export type LinkState =
  /** Figures arriving on time. */
  | 'live'
  /** Before the first figures. */
  | 'connecting'
  /** The connection dropped (or went silent); the link is reconnecting. The figures shown are old. */
  | 'lost'
  /** Connected, but the BFF could not read the figures (database down): it says so instead of repeating old ones. */
  | 'unavailable'
  /** Refused for good (no access, no such event). */
  | 'refused';

/** No figures for this long means the stream is not live, whatever the connection says (ticks are 1-2 s). */
export const STALE_AFTER_MS = 4_500;
/** After a stream error, ask again after this long. */
const RETRY_AFTER_MS = 2_000;

interface SubscriptionLike {
  status: 'idle' | 'connecting' | 'pending' | 'error';
  error: unknown;
  reset: () => void;
}

/**
 * The link state of a war-room subscription: from tRPC's status, the time of the last message, and whether the
 * last message was figures or "unavailable". Re-subscribes after an error (unless it was a refusal) and sends a
 * user whose session ended to sign-in. The page re-renders when a message comes and once more if none comes for
 * STALE_AFTER_MS (a timer armed from each message), never on a clock of its own: the banner's "N s ago" ticks in
 * `LinkAge`, which alone re-renders every second. (It used to re-render the whole war room every second, charts
 * and all: half of the page's CPU with figures arriving every second.)
 */
export function useLinkState(
  sub: SubscriptionLike,
  last: { receivedAt: number; unavailable: boolean } | null,
): { state: LinkState; receivedAt: number | null } {
  // The `receivedAt` of the message after which nothing came for STALE_AFTER_MS; stale while it is still the last.
  const [staleSince, setStaleSince] = useState<number | null>(null);
  const navigate = useNavigate();
  const href = useRouterState({ select: (s) => s.location.href });
  const resetRef = useRef(sub.reset);
  resetRef.current = sub.reset;

  const receivedAt = last?.receivedAt ?? null;
  useEffect(() => {
    if (receivedAt === null) return;
    const timer = setTimeout(() => setStaleSince(receivedAt), Math.max(0, receivedAt + STALE_AFTER_MS - Date.now()) + 1);
    return () => clearTimeout(timer);
  }, [receivedAt]);

  const code = sub.status === 'error' ? trpcCodeOf(sub.error) : undefined;
  const refused = code === 'FORBIDDEN' || code === 'NOT_FOUND' || code === 'BAD_REQUEST';
  useEffect(() => {
    if (sub.status !== 'error') return;
    if (code === 'UNAUTHORIZED') {
      void navigate({ to: '/sign-in', search: { redirect: href } });
      return;
    }
    if (refused) return;
    const timer = setTimeout(() => resetRef.current(), RETRY_AFTER_MS);
    return () => clearTimeout(timer);
  }, [sub.status, code, refused, navigate, href]);

  const stale = receivedAt !== null && staleSince === receivedAt;
  let state: LinkState;
  if (refused) state = 'refused';
  else if (!last) state = sub.status === 'error' ? 'lost' : 'connecting';
  else if (sub.status === 'connecting' || sub.status === 'error' || sub.status === 'idle' || stale) state = 'lost';
  else state = last.unavailable ? 'unavailable' : 'live';
  return { state, receivedAt };
}

/**
 * Milliseconds since `since` (or null), re-read every second: for the one element that shows an age. A newer `since`
 * reads 0 until the next second (it is newer than the last reading), which is what "just now" means.
 */
export function useAge(since: number | null): number | null {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (since === null) return;
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [since]);
  return since === null ? null : Math.max(0, now - since);
}
