#!/usr/bin/env node
// Writes scripts/test-durations.json (each test file's wall time in seconds, from vitest JSON reports) for the order
// in which `npm test` starts its files (scripts/test-sequencer.ts). Usage, after a whole run with CI=true:
//   node scripts/test-durations.mjs .test-results/results.json [more reports, e.g. one per project]
// A file that failed keeps its earlier figure (a failure's time says little about the file's), or takes this one if it
// has none and ran for a while; a file gone from the repository is dropped.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const reports = process.argv.slice(2);
if (reports.length === 0) {
  console.error('usage: node scripts/test-durations.mjs <vitest JSON report>...');
  process.exit(2);
}
const out = new URL('./test-durations.json', import.meta.url);
const seconds = existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : {};
for (const file of reports) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  for (const r of report.testResults) {
    const name = relative(root, r.name);
    const s = Math.round((r.endTime - r.startTime) / 100) / 10;
    if (r.status === 'passed' || (seconds[name] === undefined && s >= 1)) seconds[name] = s;
  }
}
for (const name of Object.keys(seconds)) if (!existsSync(join(root, name))) delete seconds[name];
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(out, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`scripts/test-durations.json: ${Object.keys(sorted).length} files`);
