import { defineConfig } from 'vitest/config';

// One root config; each package is a project. The global setup finds a real PostgreSQL
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
    maxWorkers: 2,
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.test-results/results.json' },
    projects: [
      { extends: true, test: { name: 'shared', include: ['packages/shared/src/**/*.test.ts'] } },
      { extends: true, test: { name: 'store-api', include: ['apps/store-api/test/**/*.test.ts'] } },
      { extends: true, test: { name: 'bff', include: ['apps/bff/test/**/*.test.ts'] } },
      // Most command lines run in the test's process (apps/cli/test/run.ts); the few that run the real binary, and the
      // demo that starts the product with `npm start`, load tsx in a child (seconds each on a machine running two suites).
      { extends: true, test: { name: 'cli', include: ['apps/cli/test/**/*.test.ts'], testTimeout: 600_000 } },
      // A browser scenario is dozens of steps, each a render and a request, and its files build the pages and start
      // servers first: with two suites on two cores one scenario took over 180 s. Slow is not failing; a hang still is.
      {
        extends: true,
        test: { name: 'console', include: ['apps/console/test/**/*.test.ts'], testTimeout: 420_000, hookTimeout: 600_000 },
      },
      { extends: true, test: { name: 'fan', include: ['apps/fan/test/**/*.test.ts'], testTimeout: 420_000, hookTimeout: 600_000 } },
      { extends: true, test: { name: 'edge', include: ['apps/edge/test/**/*.test.ts'] } },
    ],
  },
});
