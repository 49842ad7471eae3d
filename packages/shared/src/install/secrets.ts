import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The secrets of one install. None is ever in the source: each comes from the environment, else (outside
 * production) from a file under the install's data directory, made with 32 random bytes the first time anything
 * of the install (npm start, the CLI, the tests, a standalone server) needs it.
 */
export interface InstallSecrets {
  /** Signs and verifies development account tokens (HS256); unused when fans sign in through AUTH_JWKS_URL. */
  authSecret: string;
  /** Signs and verifies queue, admission, presale access, lottery invitation and waitlist claim tokens (shared with edges). */
  queueTokenSecret: string;
  /** Keys the stored fingerprint of payment cards (HMAC), so a copy of the database cannot be turned back into card numbers. */
  cardFingerprintSecret: string;
}

/** Each secret: its environment variable and the file under `<dataDir>/secrets/` that keeps a generated one. */
export const INSTALL_SECRETS = {
  authSecret: { env: 'AUTH_SECRET', file: 'auth_secret' },
  queueTokenSecret: { env: 'QUEUE_TOKEN_SECRET', file: 'queue_token_secret' },
  cardFingerprintSecret: { env: 'CARD_FINGERPRINT_SECRET', file: 'card_fingerprint_secret' },
} as const satisfies Record<keyof InstallSecrets, { env: string; file: string }>;

/** A secret must be at least this many bytes (UTF-8). Generated ones are 32 random bytes, base64url. */
export const MIN_SECRET_BYTES = 32;

/** Why an install's secrets could not be had: the message is one line an operator can act on. */
export class InstallSecretsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstallSecretsError';
  }
}

export interface InstallSecretsOptions {
  /** Secrets this process may go without (in production they are then not required; outside it they are still made). */
  optional?: readonly (keyof InstallSecrets)[];
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * The install's secrets. Each is its environment variable when set (32+ bytes, or an error); else, with
 * NODE_ENV=production, an error (production never makes or reads its own secrets: they are explicit); else the
 * file `<dataDir>/secrets/<name>` (mode 0600 in a 0700 directory), created atomically with 32 random bytes if it
 * does not exist, so restarts keep tokens valid and every process of the install (store API, BFF, worker, CLI)
 * shares them, while another install, with its own data directory, has others. A file readable by other users is
 * refused, as ssh refuses such a key.
 */
export function installSecrets(
  dataDir: string,
  env: Record<string, string | undefined> = process.env,
  opts: InstallSecretsOptions = {},
): InstallSecrets {
  const production = env.NODE_ENV === 'production';
  const out: Partial<InstallSecrets> = {};
  const missing: string[] = [];
  for (const [name, where] of Object.entries(INSTALL_SECRETS) as [keyof InstallSecrets, { env: string; file: string }][]) {
    const given = env[where.env];
    if (given !== undefined && given !== '') {
      if (bytes(given) < MIN_SECRET_BYTES)
        throw new InstallSecretsError(`${where.env} must be at least ${MIN_SECRET_BYTES} bytes (it has ${bytes(given)})`);
      out[name] = given;
    } else if (production) {
      if (!opts.optional?.includes(name)) missing.push(where.env);
      else out[name] = '';
    } else {
      out[name] = readOrCreate(join(dataDir, 'secrets'), where.file);
    }
  }
  if (missing.length > 0)
    throw new InstallSecretsError(
      `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required when NODE_ENV=production (${MIN_SECRET_BYTES}+ random bytes each, e.g. \`openssl rand -base64 32\`)`,
    );
  return out as InstallSecrets;
}

function readOrCreate(dir: string, file: string): string {
  const path = join(dir, file);
  const existing = readSecretFile(path);
  if (existing !== undefined) return existing;
  // The data directory itself keeps the default mode: a recursive mkdir would give it 0700 too, and then the embedded
  // PostgreSQL, which runs as the postgres user when we are root, could not reach its data under it.
  mkdirSync(dirname(dir), { recursive: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  // Written whole to a private temporary name, then linked into place: link() fails if the name exists, so two
  // processes of the install starting at once agree on one secret, and nobody ever reads a half-written file.
  const tmp = join(dir, `.${file}.${process.pid}.${randomBytes(4).toString('hex')}`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${randomBytes(32).toString('base64url')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    unlinkSync(tmp);
  }
  const made = readSecretFile(path);
  if (made === undefined) throw new InstallSecretsError(`could not create ${path}`);
  return made;
}

function readSecretFile(path: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  if ((mode & 0o077) !== 0)
    throw new InstallSecretsError(
      `${path} is readable by other users (mode ${(mode & 0o777).toString(8)}); run \`chmod 600 ${path}\` (or delete it to make a new secret, which ends every session and token of this install)`,
    );
  const secret = readFileSync(path, 'utf8').trim();
  if (bytes(secret) < MIN_SECRET_BYTES)
    throw new InstallSecretsError(`${path} holds fewer than ${MIN_SECRET_BYTES} bytes; delete it to make a new secret`);
  return secret;
}
