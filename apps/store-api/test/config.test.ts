import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBffEnv } from '@onsale/bff/env';
import { loadStoreApiConfig } from '../src/env.js';

// Safe by default: no secret in the source, the install's own secrets outside production, explicit ones in it.

const dataDir = mkdtempSync(join(tmpdir(), 'onsale-config-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const secrets = { AUTH_SECRET: 'a'.repeat(32), QUEUE_TOKEN_SECRET: 'q'.repeat(32), CARD_FINGERPRINT_SECRET: 'c'.repeat(32) };

describe('store API and BFF configuration', () => {
  it("outside production uses the install's own generated secrets, the same for the store API and the BFF", () => {
    const store = loadStoreApiConfig({ NODE_ENV: 'development' }, { dataDir });
    const bff = loadBffEnv({ NODE_ENV: 'development' }, { dataDir });
    expect(store.queueTokenSecret).toBe(bff.queueTokenSecret);
    expect(Buffer.from(store.authSecret, 'base64url')).toHaveLength(32);
    expect(store.devAuth).toBe(true);
    const elsewhere = loadStoreApiConfig({ NODE_ENV: 'development' }, { dataDir: mkdtempSync(join(dataDir, 'other-')) });
    expect(elsewhere.authSecret).not.toBe(store.authSecret);
  });

  it('in production refuses to start without explicit secrets of 32+ bytes, and refuses DEV_AUTH', () => {
    expect(() => loadStoreApiConfig({ NODE_ENV: 'production' }, { dataDir })).toThrow(
      /AUTH_SECRET, QUEUE_TOKEN_SECRET, CARD_FINGERPRINT_SECRET are required when NODE_ENV=production/,
    );
    expect(() => loadStoreApiConfig({ NODE_ENV: 'production', ...secrets, QUEUE_TOKEN_SECRET: 'short' }, { dataDir })).toThrow(
      /QUEUE_TOKEN_SECRET must be at least 32 bytes/,
    );
    expect(() => loadStoreApiConfig({ NODE_ENV: 'production', ...secrets, DEV_AUTH: 'true' }, { dataDir })).toThrow(
      /DEV_AUTH is refused when NODE_ENV=production/,
    );
    const ok = loadStoreApiConfig({ NODE_ENV: 'production', ...secrets }, { dataDir });
    expect(ok).toMatchObject({ authSecret: secrets.AUTH_SECRET, queueTokenSecret: secrets.QUEUE_TOKEN_SECRET, devAuth: false });
    expect(() => loadBffEnv({ NODE_ENV: 'production' }, { dataDir })).toThrow(/QUEUE_TOKEN_SECRET is required when NODE_ENV=production/);
    expect(loadBffEnv({ NODE_ENV: 'production', QUEUE_TOKEN_SECRET: secrets.QUEUE_TOKEN_SECRET }, { dataDir }).queueTokenSecret).toBe(
      secrets.QUEUE_TOKEN_SECRET,
    );
  });

  it('npm start with NODE_ENV=production and no secrets exits 1 with the reason, before starting anything', async () => {
    const root = join(import.meta.dirname, '..', '..', '..');
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    for (const k of ['AUTH_SECRET', 'QUEUE_TOKEN_SECRET', 'CARD_FINGERPRINT_SECRET']) delete env[k];
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'start.ts')], { cwd: root, env }, (err, _out, stderr) =>
        resolve({ code: err ? Number(err.code) : 0, stderr }),
      ),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/npm start: invalid configuration: .*QUEUE_TOKEN_SECRET.* required when NODE_ENV=production/);
  });
});
