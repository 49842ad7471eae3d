#!/usr/bin/env node
// Entry point of the root npm scripts: makes a fresh machine (Node.js and npm only) runnable by
// installing pnpm and the workspace's dependencies when they are missing, then hands over.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { setPriority } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// The Node.js this runs on, checked before anything is installed. graphile-worker 0.18 declares Node >= 22.18, and
// two of Fastify's own dependencies (cookie 2 through light-my-request, content-disposition 3 through
// @fastify/static) >= 22; onsale's use of them runs on 20.19+ too (it hands graphile-worker its tasks in code, never a
// directory of TypeScript task files for Node to load), and the suite runs on Node 20 in CI. Node 20 is past its
// end of life (April 2026), so it is accepted with a note; 21 and 22.0-22.17 are not.
const [major, minor] = process.versions.node.split('.').map(Number);
const supported = (major === 20 && minor >= 19) || (major === 22 && minor >= 18) || major >= 23;
if (!supported) {
  console.error(
    `onsale needs Node.js 22.18 or later (a long-term-support release); this is Node.js ${process.versions.node}.\n` +
      'Install it from https://nodejs.org/en/download (or `nvm install --lts`, or your system\u2019s packages, e.g. NodeSource on\n' +
      'Debian and Ubuntu), then run the command again. Node.js 20.19 or a later 20.x also runs onsale, past its end of life.',
  );
  process.exit(1);
}
if (major === 20 && process.stderr.isTTY) {
  console.error(
    `note: Node.js ${process.versions.node} is past its end of life, and graphile-worker declares Node.js 22.18; ` +
      'onsale runs on it, but install Node.js 22.18 or later when you can.',
  );
}
const PNPM_VERSION = '12.4.2';
const [command, ...args] = process.argv.slice(2);

function run(cmd, cmdArgs, opts = {}) {
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === PNPM_VERSION) return ['pnpm', []];
  return ['npx', ['--yes', `pnpm@${PNPM_VERSION}`]];
}

function needsInstall() {
  const marker = join(root, 'node_modules', '.modules.yaml');
  if (!existsSync(marker)) return true;
  const lock = join(root, 'pnpm-lock.yaml');
  return existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs;
}

const [pnpm, pnpmPre] = pnpmCommand();
if (needsInstall()) {
  const frozen = process.env.CI ? ['--frozen-lockfile'] : [];
  // The install's output goes to standard error: a command whose standard output is read (`npm run -s onsale --
  // pow:solve` inside `$(...)`, as the printed demo session does) must print only its own answer, also on the first
  // run after a pull that changed the lockfile.
  const code = run(pnpm, [...pnpmPre, 'install', ...frozen], { stdio: ['ignore', 2, 2] });
  if (code !== 0) process.exit(code);
}

// Run the workspace's own binaries directly rather than through `pnpm exec`: the shims exec node, so a signal
// sent to this process reaches the program (through `npx pnpm exec`, an intermediate `sh -c` drops it). TypeScript
// programs run in node with tsx's loader, not under tsx's command: that one runs the program in a child and, when the
// child does not acknowledge a signal within 30 ms (a busy event loop: a rehearsal's driver, a product under load),
// kills it with SIGKILL, so a Ctrl-C that should stop gracefully (and write a report, or drain the store) would not.
// Every root npm script comes through here, so each works with nothing but Node.js and npm on the PATH.
const bin = (name) => join(root, 'node_modules', '.bin', name);
const ts = (script) => [process.execPath, ['--import', 'tsx', script]];
const node = (script) => [process.execPath, [script]];
const routeTree = node('apps/console/scripts/generate-route-tree.mjs');
const cycles = [
  bin('madge'),
  ['--circular', '--extensions', 'ts,tsx', '--ts-config', 'tsconfig.base.json', 'packages/shared/src', 'apps', 'scripts'],
];
// ESLint keeps a cache of the files it passed (`.eslintcache`, git-ignored), keyed by their content: a second run
// lints only what changed. Type-aware rules can flag a file whose own text did not change (a type it uses did), so
// CI, whose clone has no cache anyway, lints everything (`rm .eslintcache` does the same locally).
const eslint = [bin('eslint'), process.env.CI ? ['.'] : ['--cache', '--cache-strategy', 'content', '.']];
// Prettier's cache (node_modules/.cache/prettier, keyed by each file's content, the options and Prettier's version):
// a second check formats only the files that changed (38.7 s of CPU -> 2.9 s with nothing changed). Formatting is
// per file, so unlike ESLint's type-aware rules a cached pass cannot go stale; CI's fresh clone skips writing it.
const prettierCache = process.env.CI ? [] : ['--cache', '--cache-strategy', 'content'];
const vite = (app) => [join(root, 'apps', app, 'node_modules', '.bin', 'vite'), ['build'], { cwd: join(root, 'apps', app) }];
/** Each command: its steps, run in order; the last one receives the command line's extra arguments. */
const targets = {
  start: [ts('scripts/start.ts')],
  onsale: [ts('apps/cli/src/main.ts')],
  bench: [ts('scripts/bench.ts')],
  edge: [ts('scripts/edge.ts')],
  test: [[bin('vitest'), ['run']]],
  // The pure test files, without the database's global setup (vitest.config.ts: `unitTestFiles`).
  'test:unit': [[bin('vitest'), ['run', '--project', 'unit']]],
  // The test files that import a file changed since the last commit (or since a ref: `npm run test:changed -- main`).
  'test:changed': [[bin('vitest'), ['run', '--changed']]],
  typecheck: [node('scripts/typecheck.mjs')],
  lint: [routeTree, eslint, cycles],
  'lint:cycles': [cycles],
  format: [[bin('prettier'), ['--write', ...prettierCache, '.']]],
  'format:check': [[bin('prettier'), ['--check', ...prettierCache, '.']]],
  build: [vite('console'), vite('fan')],
};
const target = targets[command];
if (!target) {
  console.error(`unknown command ${command}; expected one of ${Object.keys(targets).join(', ')}`);
  process.exit(2);
}
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` };

/**
 * Runs a command's steps in order, stopping at the first that fails; resolves to its exit status. `attach` sees each
 * step's child (to read its output when `stdio` pipes it).
 */
function runSteps(steps, extra, stdio, attach) {
  return steps.reduce(
    (previous, [cmd, cmdArgs, opts], i) =>
      previous.then((code) =>
        code !== 0
          ? code
          : new Promise((resolve) => {
              const last = i === steps.length - 1;
              const c = spawn(cmd, [...cmdArgs, ...(last ? extra : [])], { cwd: root, stdio, env, ...opts });
              attach?.(c);
              if (last) for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => c.kill(sig));
              c.on('error', (err) => {
                console.error(`${command}: could not run ${cmd}: ${err.message}`);
                resolve(1);
              });
              c.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
            }),
      ),
    Promise.resolve(0),
  );
}

// `npm test` is the whole gate: the checks (typecheck, lint and its import-cycle check, format check) and the tests.
// They run side by side: the tests wait mostly on their databases, servers, browsers and child processes, and the
// checks are CPU work that fits in those waits (on a 2-core machine the gate took minutes longer with the checks first).
// A check's output is held and printed when it ends, so it does not interleave with the tests'; a failed check is
// printed at once (stop with Ctrl-C, or let the tests finish) and makes `npm test` exit non-zero however the tests
// went, so CI fails on a type error, a lint finding, an import cycle or an unformatted file as before.
const CHECK_PRIORITY = 10;
if (command === 'test') {
  // The console's route tree first, once: typecheck and lint each generate it, and two generators at once race.
  if (run(routeTree[0], routeTree[1], { env }) !== 0) process.exit(1);
  // The lint check without its route tree step (done above); typecheck.mjs makes it again, quickly, as it stands.
  const checks = { typecheck: targets.typecheck, lint: [eslint, cycles], 'format:check': targets['format:check'] };
  const started = Date.now();
  const checked = Promise.all(
    Object.entries(checks).map(async ([name, steps]) => {
      const out = [];
      const code = await runSteps(steps, [], ['ignore', 'pipe', 'pipe'], (c) => {
        // Below the tests' priority (nice 10; the programs a check starts inherit it): the checks take the CPU the
        // tests leave idle, and no longer slow a test file's imports or clocks when both want the two cores.
        // (No pid: it failed to start, and its 'error' event reports it.)
        if (c.pid !== undefined) {
          try {
            setPriority(c.pid, CHECK_PRIORITY);
          } catch {
            // Already gone, or not allowed here: it runs at the tests' priority.
          }
        }
        c.stdout.on('data', (b) => out.push(b));
        c.stderr.on('data', (b) => out.push(b));
      });
      const took = `${Math.round((Date.now() - started) / 1000)} s`;
      if (code === 0) console.log(`npm test: \`npm run ${name}\` passed (${took})`);
      else {
        process.stderr.write(Buffer.concat(out));
        console.error(`npm test: \`npm run ${name}\` FAILED (exit ${code}, ${took}); the tests go on, and npm test will exit 1`);
      }
      return code === 0 ? undefined : name;
    }),
  );
  const tests = await runSteps(target, args, 'inherit');
  const failed = (await checked).filter((name) => name !== undefined);
  for (const name of failed) console.error(`npm test: \`npm run ${name}\` failed (its output is above)`);
  process.exit(failed.length > 0 ? 1 : tests);
}
process.exit(await runSteps(target, args, 'inherit'));
