import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './scripts/test-sequencer.js';

// The pure test files: no database, no server, no browser. They form the `unit` project, which runs without the
// global setup (no template database is migrated), so `npm run test:unit` takes seconds, not minutes; every other
// project excludes them, so each file still runs exactly once in `npm test`. A file listed here that needs the
// database fails loudly (`inject('templateDatabaseUrl')` is undefined); a pure file left out only runs slower.
export const unitTestFiles = [
  'eslint-rules/onsale.test.ts',
  'apps/cli/test/driver-timing.test.ts',
  'apps/cli/test/plan.test.ts',
  'apps/fan/test/calendar.test.ts',
  'apps/store-api/test/once-serializer.test.ts',
  'apps/store-api/test/status-validation.test.ts',
  'packages/shared/src/abuse/bot-score.test.ts',
  'packages/shared/src/abuse/join-gate.test.ts',
  'packages/shared/src/abuse/pow-hash.test.ts',
  'packages/shared/src/abuse/pow.test.ts',
  'packages/shared/src/abuse/review.test.ts',
  'packages/shared/src/admission/advance.test.ts',
  'packages/shared/src/admission/budget.test.ts',
  'packages/shared/src/admission/fairness-report.test.ts',
  'packages/shared/src/admission/plan.test.ts',
  'packages/shared/src/admission/published-summary.test.ts',
  'packages/shared/src/admission/rate.test.ts',
  'packages/shared/src/allocations/access-code.test.ts',
  'packages/shared/src/auth/account-token.test.ts',
  'packages/shared/src/db/faults.test.ts',
  'packages/shared/src/db/group-commit.test.ts',
  'packages/shared/src/db/pool-size.test.ts',
  'packages/shared/src/encoding.test.ts',
  'packages/shared/src/events/board.test.ts',
  'packages/shared/src/events/change-rules.test.ts',
  'packages/shared/src/events/create-checks.test.ts',
  'packages/shared/src/events/look.test.ts',
  'packages/shared/src/export/csv.test.ts',
  'packages/shared/src/install/process-hooks.test.ts',
  'packages/shared/src/install/secrets.test.ts',
  'packages/shared/src/install/trust-proxy.test.ts',
  'packages/shared/src/inventory/availability-cache.test.ts',
  'packages/shared/src/inventory/best-available.test.ts',
  'packages/shared/src/lottery/invitation.test.ts',
  'packages/shared/src/metrics/request-timer.test.ts',
  'packages/shared/src/notify/signature.test.ts',
  'packages/shared/src/overload/shedding.test.ts',
  'packages/shared/src/queue/copy.test.ts',
  'packages/shared/src/queue/edge.test.ts',
  'packages/shared/src/queue/fairness.test.ts',
  'packages/shared/src/queue/token-cache.test.ts',
  'packages/shared/src/rehearsal/judge.test.ts',
  'packages/shared/src/rehearsal/plan.test.ts',
  'packages/shared/src/rehearsal/refusals.test.ts',
  'packages/shared/src/rehearsal/resources.test.ts',
  'packages/shared/src/rehearsal/stats.test.ts',
  'packages/shared/src/rehearsal/verdict.test.ts',
  'packages/shared/src/tickets/codes.test.ts',
  'packages/shared/src/tickets/gate.test.ts',
  'packages/shared/src/users/common-passwords.test.ts',
  'packages/shared/src/users/password.test.ts',
  'packages/shared/src/users/users.schema.test.ts',
  'packages/shared/src/warroom/alerts.test.ts',
  'packages/shared/src/warroom/explain.test.ts',
  'packages/shared/src/warroom/prometheus.test.ts',
  'packages/shared/src/words/audit.test.ts',
  'packages/shared/src/words/money.test.ts',
];

const databaseProjects = { exclude: ['**/node_modules/**', ...unitTestFiles] };

/**
 * Test files side by side: one a core, or `ONSALE_TEST_WORKERS`. The files wait far more than they compute (a quiet
 * `.ci/run` kept 1.1 of 2 cores busy), but a third file on two cores made the whole run slower, not faster (a fresh-clone
 * `.ci/run` on a quiet machine, 2026-12-06: 23 min 35 s against 20 min 42 s with two; typecheck and lint, which run
 * beside the tests, took 2.4 and 2.8 times as long), and a time-scaled rehearsal starved of CPU missed its sell-out.
 * Each file holds its own pools: the connection budget is in docs/testing.md, "Connections are counted".
 */
export function testWorkers(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): number {
  const asked = env.ONSALE_TEST_WORKERS;
  if (asked !== undefined && asked !== '') {
    const n = Number(asked);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`ONSALE_TEST_WORKERS must be a whole number of at least 1, not ${JSON.stringify(asked)}`);
    return n;
  }
  return Math.max(1, cores);
}

// One root config; each package is a project, plus `unit` (above). The database projects' global setup finds a real PostgreSQL
// (TEST_DATABASE_URL, else 127.0.0.1:5432, else an embedded server) and migrates a template once.
export default defineConfig({
  test: {
    globalSetup: ['./scripts/test-global-setup.ts'],
    // Generous: the suite must pass while another full run shares the machine's two cores (a stampede test of 1,000
    // concurrent requests then takes minutes). A hung test fails later, never a slow one. Test files set a longer
    // timeout where they need one and never a shorter one: under load a short one fails, not the behaviour.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // A page's figures arrive on the war room's 1 s tick or a poll; with two test files sharing two cores a second
    // is too tight a wait for the next one (vitest's default poll timeout is 1 s).
    expect: { poll: { timeout: 10_000 } },
    fileParallelism: true,
    maxWorkers: testWorkers(),
    // The longest files start first, whatever their project (scripts/test-sequencer.ts), so every worker stays busy
    // to the end of `npm test`.
    sequence: { sequencer: LongestFirstSequencer },
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.test-results/results.json' },
    projects: [
      { extends: true, test: { name: 'unit', include: unitTestFiles, isolate: false } },
      { extends: true, test: { name: 'shared', include: ['packages/shared/src/**/*.test.ts'], isolate: false, ...databaseProjects } },
      // The database projects but the browsers' share modules between the files of a worker (`isolate: false`): a test
      // helper's module state (an undici Agent, a list of processes) outlives its file, so a helper that closes what
      // it holds makes it again (docs/testing.md, "share modules").
      { extends: true, test: { name: 'store-api', include: ['apps/store-api/test/**/*.test.ts'], isolate: false, ...databaseProjects } },
      { extends: true, test: { name: 'bff', include: ['apps/bff/test/**/*.test.ts'], isolate: false, ...databaseProjects } },
      // Most command lines run in the test's process (apps/cli/test/run.ts); the few that run the real binary, and the
      // demo that starts the product with `npm start`, load tsx in a child (seconds each on a machine running two suites).
      {
        extends: true,
        test: { name: 'cli', include: ['apps/cli/test/**/*.test.ts'], testTimeout: 600_000, isolate: false, ...databaseProjects },
      },
      // A browser scenario is dozens of steps, each a render and a request, and its files build the pages and start
      // servers first: with two suites on two cores one scenario took over 180 s. Slow is not failing; a hang still is.
      {
        extends: true,
        test: {
          name: 'console',
          include: ['apps/console/test/**/*.test.ts'],
          testTimeout: 420_000,
          hookTimeout: 600_000,
          ...databaseProjects,
        },
      },
      {
        extends: true,
        test: { name: 'fan', include: ['apps/fan/test/**/*.test.ts'], testTimeout: 420_000, hookTimeout: 600_000, ...databaseProjects },
      },
      { extends: true, test: { name: 'edge', include: ['apps/edge/test/**/*.test.ts'], isolate: false, ...databaseProjects } },
    ],
  },
});
