// `npm run bench -- <name>`: runs one benchmark; each prints its figures beside the physical limit it measured.
const benches: Record<string, () => Promise<{ main(argv: string[]): Promise<void> }>> = {
  holds: () => import('../apps/store-api/bench/holds.js'),
  queue: () => import('../apps/store-api/bench/queue.js'),
  joins: () => import('../apps/store-api/bench/joins.js'),
  'store-joins': () => import('../apps/store-api/bench/store-joins.js'),
  ga: () => import('../apps/store-api/bench/ga.js'),
  seats: () => import('../apps/store-api/bench/seats.js'),
  waitlist: () => import('../apps/store-api/bench/waitlist.js'),
  edge: () => import('../apps/edge/bench/edge.js'),
  'edge-guard': () => import('../apps/edge/bench/guard.js'),
  'edge-guard-ab': () => import('../apps/edge/bench/guard-ab.js'),
  'edge-joins': () => import('../apps/edge/bench/joins-stub.js'),
  driver: () => import('../apps/cli/bench/driver.js'),
  'war-room': () => import('../apps/console/bench/war-room.js'),
};

const [name, ...rest] = process.argv.slice(2);
const load = name ? benches[name] : undefined;
if (!load) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}> [options]   (--help for a benchmark's options)`);
  process.exit(2);
}
await (await load()).main(rest);
process.exit(0);
