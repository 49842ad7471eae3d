/**
 * Polls `read` until `ok` accepts its value, then returns it; after `timeoutMs` (default a minute: a loaded machine
 * is slow, and a passing test returns as soon as the condition holds) it returns the last value read, for the
 * test's own assertion to report. Tests poll for a condition instead of sleeping for a fixed time.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const end = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}

/** Polls `read` until it returns a truthy value and returns that; throws `timed out waiting for <what>` after `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  read: () => Promise<T | undefined | null | false>,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const v = await pollUntil(read, (x) => Boolean(x), opts);
  if (!v) throw new Error(`timed out waiting for ${what}`);
  return v;
}

/**
 * How long a browser test waits for a page to show something (Playwright's own default is 30 s). A wait for a
 * condition that returns as soon as it holds, never a pace: with two test suites at once on two cores, a page has
 * taken longer than 30 s to show a row.
 */
export const PAGE_WAIT_MS = 90_000;
