import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { AccountTokens } from '@onsale/shared/auth';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { createTokenKey, EDGE_JOINS_HEADER, EDGE_JOINS_PATH, EDGE_JOINS_STREAM, signEdgeJoins } from '@onsale/shared/queue';
import { benchDatabase } from './database.js';
import { cpuMicros, protectedStoreEnv, startProcess, stopProcess } from './load.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- store-joins [--joins N] [--batch N] [--connections N] [--rounds N] [--alone] [--against <checkout>]

The store API's own part of a join, without the edge: batches of --batch joins (default 100) of new fans with a
browser's headers, each signed as an edge signs it and sent to POST /edge/joins (streamed answers, as the edge asks
for them) over --connections connections (default 2; 100 with --alone), --joins joins a round (default 5000), after 500 unmeasured.
Request limits, the bot gate and load shedding are on, as in npm run bench -- joins. Prints the store process's CPU
per join answered 200 (user + system, /proc) each round and the median. --alone sends each join alone to
POST /events/:id/queue instead. --against <checkout> starts a second store from another checkout (its
apps/store-api/bench/server.ts, on the same database and secrets) and measures the two in turn every round (which
goes first alternates): an A/B of the store's code in one run, the edge and its noise left out.`;

/** A browser's headers, as the rehearsal's human fans send them (the bot gate scores these as a person). */
const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      joins: { type: 'string', default: '5000' },
      batch: { type: 'string', default: '100' },
      connections: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      alone: { type: 'boolean', default: false },
      against: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const perRound = Number(values.joins);
  const batchSize = Math.max(1, Number(values.batch));
  // Alone, each connection waits for its join's answer: enough of them that the store's statements are shared.
  const connections = Math.max(1, Number(values.connections ?? (values.alone ? 100 : 2)));
  const rounds = Math.max(1, Number(values.rounds));
  const bench = await benchDatabase();
  const secrets = installSecrets(installDataDir());
  const accounts = new AccountTokens(secrets.authSecret);
  const key = await createTokenKey(secrets.queueTokenSecret);
  const club = JSON.parse(readFileSync(join(root, 'examples', 'club.json'), 'utf8'));
  const newEvent = () =>
    bench.db.transaction().execute((trx) =>
      createEvent(
        trx,
        parseEventFile({
          ...club,
          name: 'bench edge joins',
          fairnessMode: 'FIFO',
          onsaleAt: new Date(Date.now() - 60_000).toISOString(),
          startsAt: new Date(Date.now() + 30 * 86400_000).toISOString(),
        }),
        'bench',
        { signOff: true },
      ),
    );
  const env = {
    ...protectedStoreEnv(bench.url),
    // Both stores (--against) sign and verify with this install's secrets.
    QUEUE_TOKEN_SECRET: secrets.queueTokenSecret,
    AUTH_SECRET: secrets.authSecret,
  };
  const builds: { name: string; script: string }[] = [{ name: 'this build', script: 'apps/store-api/bench/server.ts' }];
  if (values.against) builds.push({ name: 'against', script: resolve(values.against, 'apps/store-api/bench/server.ts') });
  const stores = await Promise.all(builds.map((b) => startProcess(b.script, env)));
  let fanSeq = 0;
  const fans = async (n: number) => {
    const out: Record<string, string>[] = [];
    for (let i = 0; i < n; i++) {
      const k = fanSeq++;
      const address = `10.${100 + (k >> 16)}.${(k >> 8) & 255}.${k & 255}`;
      out.push({
        ...BROWSER,
        authorization: `Bearer ${(await accounts.issue(`edge-joins-bench-${process.pid}-${k}`)).token}`,
        'x-device-id': `edge-joins-bench-device-${process.pid}-${k}`,
        'x-forwarded-for': address,
      });
    }
    return out;
  };
  /** Sends `list`'s joins to `pool`: in batches (or alone); the number answered 200. */
  const send = async (pool: Pool, eventId: string, list: Record<string, string>[]) => {
    if (values.alone) {
      let ok = 0;
      for (const headers of list) {
        const r = await pool.request({ method: 'POST', path: `/events/${eventId}/queue`, headers });
        await r.body.text();
        if (r.statusCode === 200) ok++;
      }
      return ok;
    }
    const body = JSON.stringify({ joins: list.map((headers) => ({ path: `/events/${eventId}/queue`, headers })) });
    const r = await pool.request({
      method: 'POST',
      path: EDGE_JOINS_PATH,
      headers: {
        'content-type': 'application/json',
        accept: EDGE_JOINS_STREAM,
        [EDGE_JOINS_HEADER]: await signEdgeJoins(key, body, Date.now()),
      },
      body,
    });
    const text = await r.body.text();
    return text.split('\n').filter((line) => line.includes('"status":200,')).length;
  };
  const run = async (pool: Pool, eventId: string, list: Record<string, string>[]) => {
    let next = 0;
    let ok = 0;
    const size = values.alone ? Math.ceil(list.length / connections) : batchSize;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < list.length) {
          const part = list.slice(next, next + size);
          next += size;
          const answered = await send(pool, eventId, part);
          ok += answered;
        }
      }),
    );
    return ok;
  };
  const measure = async (i: number) => {
    const store = stores[i]!;
    const pool = new Pool(`http://127.0.0.1:${store.port}`, { connections, keepAliveTimeout: 60_000 });
    try {
      const [warm, ev] = [await newEvent(), await newEvent()];
      const [warmFans, measured] = [await fans(500), await fans(perRound)];
      await run(pool, warm.eventId, warmFans);
      const cpu0 = cpuMicros(store.child.pid!);
      const started = performance.now();
      const ok = await run(pool, ev.eventId, measured);
      const elapsed = performance.now() - started;
      const cpu = cpuMicros(store.child.pid!);
      return {
        ok,
        joinsPerSecond: Math.round((ok / elapsed) * 1000),
        cpuUsPerJoin: cpu0 === null || cpu === null || ok === 0 ? null : Math.round((cpu - cpu0) / ok),
      };
    } finally {
      await pool.close();
    }
  };
  const results = builds.map(() => [] as (number | null)[]);
  try {
    for (let r = 0; r < rounds; r++) {
      const order = builds.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        const m = await measure(i);
        results[i]!.push(m.cpuUsPerJoin);
        const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
        console.log(
          `round ${r + 1}, ${builds[i]!.name}: ${m.ok} of ${perRound} answered 200, ${m.joinsPerSecond}/s, store ${m.cpuUsPerJoin} us a join (load ${load})`,
        );
      }
    }
  } finally {
    for (const s of stores) await stopProcess(s.child);
    await bench.close();
  }
  const median = (xs: (number | null)[]) => {
    const s = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
    return s.length === 0 ? null : s[Math.floor((s.length - 1) / 2)]!;
  };
  const how = values.alone ? 'each join alone' : `batches of ${batchSize}`;
  for (const [i, b] of builds.entries())
    console.log(`${b.name}: the store's CPU a join (${how}), by round ${results[i]!.join(' / ')} us; median ${median(results[i]!)} us`);
}
