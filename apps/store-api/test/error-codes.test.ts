import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@onsale/shared';
import { setupApp, type TestApp } from './helper.js';

// Clients switch on error codes, so the registry (ERROR_CODES) must hold every code the code base can answer with,
// and the OpenAPI document must publish it. DomainError and its helpers only take a registered code (a misspelt one
// does not typecheck); this also catches codes written into answer bodies by hand and codes of other error types.

const root = fileURLToPath(new URL('../../../', import.meta.url));
const sourceRoots = ['packages/shared/src', 'apps/store-api/src', 'apps/bff/src', 'apps/edge/src', 'apps/cli/src', 'scripts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' || d.name === 'migrations' || d.name === 'testing' ? [] : sourceFiles(path);
    return /\.(ts|tsx|mjs)$/.test(d.name) && !/\.test\./.test(d.name) ? [path] : [];
  });
}

/** Where a code is thrown or answered: a domain error, its helpers, another error type, an answer body. */
const THROWN = [
  /DomainError\(\s*(?:'[a-z_]+'|[\w.]+)\s*,\s*'([A-Z][A-Z0-9_]+)'/g,
  /\b(?:notFound|invalid|conflict|bad|err|powError|text|parseInput|parseOrThrow|refuseCommonPassword)\(\s*(?:[^,()]+,\s*){0,2}'([A-Z][A-Z0-9_]+)'/g,
  /\b[A-Z]\w*Error\(\s*'([A-Z][A-Z0-9_]+)'/g,
  /\berror:\s*'([A-Z][A-Z0-9_]+)'/g,
];

describe('error codes', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await setupApp();
  });
  afterAll(() => h?.close());

  it('every code thrown or answered in the code base is in the registry', () => {
    const registered = new Set<string>(ERROR_CODES);
    const unregistered: string[] = [];
    let found = 0;
    for (const dir of sourceRoots)
      for (const file of sourceFiles(join(root, dir))) {
        const text = readFileSync(file, 'utf8');
        for (const pattern of THROWN)
          for (const m of text.matchAll(pattern)) {
            found++;
            if (!registered.has(m[1]!)) unregistered.push(`${m[1]} (${relative(root, file)})`);
          }
      }
    expect(found).toBeGreaterThan(200);
    expect(unregistered).toEqual([]);
  });

  it('the registry is sorted and has no duplicates', () => {
    expect([...new Set(ERROR_CODES)]).toEqual([...ERROR_CODES].sort());
  });

  it('the OpenAPI document lists the registry, and every error answer refers to it', async () => {
    type Schema = { $ref?: string; properties?: Record<string, Schema>; enum?: string[] };
    const doc = (await h.app.inject({ url: '/docs/json' })).json<{
      components: { schemas: Record<string, Schema> };
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
    }>();
    expect(doc.components.schemas.ErrorCode?.enum).toEqual([...ERROR_CODES]);
    let answers = 0;
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops))
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400 || Number(status) === 429) continue;
          const schema = response.content?.['application/json']?.schema;
          expect(schema?.properties?.error?.$ref, `${method} ${path} ${status}`).toBe('#/components/schemas/ErrorCode');
          answers++;
        }
    expect(answers).toBeGreaterThan(100);
  });
});
