// The order in which `npm test` starts its test files: the longest first, across every project, so the workers
// stay busy to the end instead of one of them running a four-minute file alone after the others are done (vitest's
// own order runs the projects one after another by name and, on a fresh clone with no cache, each project's files by
// size). The durations are `scripts/test-durations.json`, made from a whole run's JSON report by
// `node scripts/test-durations.mjs .test-results/results.json`. A file missing from it (a new one, or one not timed
// yet) counts as a minute: the files known to take longer still start before it. Only the order changes: every file
// still runs, once.
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** What a file the table does not know is taken to last, in seconds. */
const UNKNOWN_SECONDS = 60;

const durations: Record<string, number> = JSON.parse(readFileSync(new URL('./test-durations.json', import.meta.url), 'utf8')) as Record<
  string,
  number
>;

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order first (by size on a fresh clone), so ties keep it.
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification) => durations[relative(root, spec.moduleId).split('\\').join('/')] ?? UNKNOWN_SECONDS;
    return base
      .map((spec, i) => ({ spec, i, s: seconds(spec) }))
      .sort((a, b) => (a.s === b.s ? a.i - b.i : b.s - a.s))
      .map(({ spec }) => spec);
  }
}
