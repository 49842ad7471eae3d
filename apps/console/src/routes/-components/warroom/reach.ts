import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '../../../trpc';

/** Whether the console can reach the BFF now, as the war room's controls need to know before offering themselves. */
export type Reach = 'reachable' | 'unreachable' | 'checking';

/** Whether the browser says it has a network (`navigator.onLine`, and its online / offline events). */
export function useOnline(): boolean {
  const [online, setOnline] = useState(() => (typeof navigator === 'undefined' ? true : navigator.onLine));
  useEffect(() => {
    const up = () => setOnline(true);
    const down = () => setOnline(false);
    window.addEventListener('online', up);
    window.addEventListener('offline', down);
    return () => {
      window.removeEventListener('online', up);
      window.removeEventListener('offline', down);
    };
  }, []);
  return online;
}

/** A probe this old no longer says the server answers. */
const PROBE_FRESH_MS = 7_000;
const PROBE_EVERY_MS = 3_000;

/**
 * Reachability of the server for the queue controls. While the figures stream live the server answers; when the
 * stream is down (or the browser is offline) a plain request (`warRoom.controls`) is made every 3 s: the stream may
 * be cut while requests still pass (a proxy ending long-lived connections), or both may be down. The controls are
 * offered only while the server answers.
 */
export function useServerReach(eventId: string, live: boolean): { reach: Reach; lastAnswerAt: number | null; serverError: boolean } {
  const trpc = useTRPC();
  const online = useOnline();
  const probe = useQuery({
    ...trpc.warRoom.controls.queryOptions({ eventId }),
    enabled: !live,
    refetchInterval: PROBE_EVERY_MS,
    refetchIntervalInBackground: true,
    retry: false,
    staleTime: 0,
  });
  const lastAnswerAt = probe.dataUpdatedAt > 0 ? probe.dataUpdatedAt : null;
  // A 5xx is an answer from a server that cannot act now (its database is unreachable): the controls are off too.
  const status = (probe.error as { data?: { httpStatus?: number } } | null)?.data?.httpStatus;
  const serverError = status !== undefined && status >= 500;
  if (!online) return { reach: 'unreachable', lastAnswerAt, serverError: false };
  if (live) return { reach: 'reachable', lastAnswerAt, serverError: false };
  if (probe.isError && probe.errorUpdatedAt >= probe.dataUpdatedAt) return { reach: 'unreachable', lastAnswerAt, serverError };
  if (lastAnswerAt !== null && Date.now() - lastAnswerAt < PROBE_FRESH_MS) return { reach: 'reachable', lastAnswerAt, serverError: false };
  return { reach: 'checking', lastAnswerAt, serverError: false };
}
