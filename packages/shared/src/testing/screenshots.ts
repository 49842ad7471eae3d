import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Where a browser test writes the screenshots a page under docs/ shows (`docs/console/`, `docs/fan-pages/`): into
 * docs/ only when asked (`UPDATE_SCREENSHOTS=1`), else beside the other test results (`.test-results/screenshots/`,
 * git-ignored), so a test run leaves the committed pictures alone and `git status` clean.
 */
export function docsScreenshotDir(folder: 'console' | 'fan-pages'): string {
  const dir = process.env.UPDATE_SCREENSHOTS === '1' ? join(root, 'docs', folder) : join(root, '.test-results', 'screenshots', folder);
  mkdirSync(dir, { recursive: true });
  return dir;
}
