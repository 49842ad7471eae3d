import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { installSecrets, InstallSecretsError } from './secrets.js';

const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'onsale-secrets-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('installSecrets', () => {
  it('makes 32 random bytes per secret on first use, in 0600 files of a 0700 directory, and reads the same ones after', () => {
    const dir = scratch();
    const first = installSecrets(dir, {});
    for (const s of [first.authSecret, first.queueTokenSecret, first.cardFingerprintSecret])
      expect(Buffer.from(s, 'base64url')).toHaveLength(32);
    expect(new Set([first.authSecret, first.queueTokenSecret, first.cardFingerprintSecret]).size).toBe(3);
    expect(statSync(join(dir, 'secrets')).mode & 0o777).toBe(0o700);
    for (const f of ['auth_secret', 'queue_token_secret', 'card_fingerprint_secret'])
      expect(statSync(join(dir, 'secrets', f)).mode & 0o777).toBe(0o600);
    expect(installSecrets(dir, {})).toEqual(first);
  });

  it('makes only secrets/ private: a data directory it creates keeps the default mode, so the embedded server can reach pg/ beside it', () => {
    const dataDir = join(scratch(), '.data');
    installSecrets(dataDir, {});
    expect(statSync(dataDir).mode & 0o777).toBe(0o777 & ~process.umask());
    expect(statSync(join(dataDir, 'secrets')).mode & 0o777).toBe(0o700);
  });

  it('gives two installs (two data directories) different secrets', () => {
    const a = installSecrets(scratch(), {});
    const b = installSecrets(scratch(), {});
    expect(a.authSecret).not.toBe(b.authSecret);
    expect(a.queueTokenSecret).not.toBe(b.queueTokenSecret);
  });

  it('takes a secret from the environment over the file, and refuses one shorter than 32 bytes', () => {
    const dir = scratch();
    const explicit = 'x'.repeat(32);
    expect(installSecrets(dir, { QUEUE_TOKEN_SECRET: explicit }).queueTokenSecret).toBe(explicit);
    expect(() => installSecrets(dir, { AUTH_SECRET: 'too-short' })).toThrow(/AUTH_SECRET must be at least 32 bytes/);
  });

  it('in production refuses to start without explicit secrets, names every missing one, and writes nothing', () => {
    const dir = scratch();
    const run = () => installSecrets(dir, { NODE_ENV: 'production', AUTH_SECRET: 'a'.repeat(40) });
    expect(run).toThrow(InstallSecretsError);
    expect(run).toThrow(/QUEUE_TOKEN_SECRET, CARD_FINGERPRINT_SECRET are required when NODE_ENV=production/);
    expect(() => statSync(join(dir, 'secrets'))).toThrow();
    // A generated file is never used in production.
    installSecrets(dir, {});
    expect(run).toThrow(InstallSecretsError);
    const all = {
      NODE_ENV: 'production',
      AUTH_SECRET: 'a'.repeat(32),
      QUEUE_TOKEN_SECRET: 'q'.repeat(32),
      CARD_FINGERPRINT_SECRET: 'c'.repeat(32),
    };
    expect(installSecrets(dir, all).queueTokenSecret).toBe('q'.repeat(32));
    expect(installSecrets(dir, { ...all, AUTH_SECRET: undefined }, { optional: ['authSecret'] }).authSecret).toBe('');
  });

  it('refuses a secret file other users can read, and one that is too short', () => {
    const dir = scratch();
    installSecrets(dir, {});
    const file = join(dir, 'secrets', 'auth_secret');
    chmodSync(file, 0o644);
    expect(() => installSecrets(dir, {})).toThrow(/readable by other users \(mode 644\)/);
    writeFileSync(file, 'short\n', { mode: 0o600 });
    chmodSync(file, 0o600);
    expect(() => installSecrets(dir, {})).toThrow(/fewer than 32 bytes/);
  });

  it('processes of one install starting at once agree on one secret', async () => {
    const dir = scratch();
    const module = new URL('./secrets.ts', import.meta.url).href;
    // Four processes race to create the files; every one must read what one of them linked into place.
    const script = `const { installSecrets } = await import(${JSON.stringify(module)}); console.log(JSON.stringify(installSecrets(${JSON.stringify(dir)}, {})));`;
    const results = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<unknown>((resolve, reject) => {
            execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], (err, stdout) =>
              err ? reject(new Error(err.message, { cause: err })) : resolve(JSON.parse(stdout) as unknown),
            );
          }),
      ),
    );
    for (const r of results) expect(r).toEqual(results[0]);
    expect(readFileSync(join(dir, 'secrets', 'queue_token_secret'), 'utf8').trim()).toBe(
      (results[0] as { queueTokenSecret: string }).queueTokenSecret,
    );
  });
});
