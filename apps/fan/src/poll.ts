import { useEffect, useRef, useState } from 'react';
import { nextPollMs } from './api';

/**
 * Runs `task` again and again, each time after the delay it returns (seconds, the server's Retry-After; null
 * stops), with jitter, backing off while the page is hidden and coming back (never earlier than the server said)
 * when it is shown again. `nextAt` is when the next run is due (ms), for "checking again in N s".
 */
export function usePoll(task: (signal: AbortSignal) => Promise<number | null>, active: boolean, key: unknown): { nextAt: number | null } {
  const [nextAt, setNextAt] = useState<number | null>(null);
  const taskRef = useRef(task);
  taskRef.current = task;
  useEffect(() => {
    if (!active) return;
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let notBefore = 0;
    let lastRetry = 0;
    let running = false;
    const run = async () => {
      timer = undefined;
      running = true;
      setNextAt(null);
      let retry: number | null;
      try {
        retry = await taskRef.current(abort.signal);
      } catch (e) {
        if ((e as Error).name === 'AbortError') return;
        retry = 5;
      } finally {
        running = false;
      }
      if (abort.signal.aborted || retry === null) return;
      lastRetry = retry;
      notBefore = Date.now() + retry * 1000;
      schedule(nextPollMs(retry, document.hidden));
    };
    const schedule = (ms: number) => {
      if (timer) clearTimeout(timer);
      setNextAt(Date.now() + ms);
      timer = setTimeout(() => void run(), ms);
    };
    const onVisibility = () => {
      if (running || abort.signal.aborted || !timer) return;
      // Shown again: come back as soon as the server allows; hidden: stretch the wait already scheduled.
      schedule(document.hidden ? nextPollMs(lastRetry, true) : Math.max(0, notBefore - Date.now()) + Math.random() * 1000);
    };
    document.addEventListener('visibilitychange', onVisibility);
    void run();
    return () => {
      abort.abort();
      if (timer) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [active, key]);
  return { nextAt };
}

/** The current time, re-read every `everyMs` (countdowns). */
export function useNow(everyMs = 1000, now: () => number = Date.now): number {
  const [t, setT] = useState(now);
  useEffect(() => {
    const id = setInterval(() => setT(now()), everyMs);
    return () => clearInterval(id);
  }, [everyMs, now]);
  return t;
}
