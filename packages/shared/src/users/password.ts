import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Passwords are hashed with scrypt from node:crypto (OpenSSL's): memory-hard, no native add-on to build, and kept
// by the Node.js project. Cost N=2^15, r=8, p=3 is one of OWASP's equivalent scrypt settings (32 MiB per hash,
// roughly 0.1-0.3 s here). The stored string names its parameters, so raising the cost later needs no
// migration: old hashes still verify with the parameters they were made with.

const COST = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
// OpenSSL needs a little over 128 * N * r bytes; Node's default ceiling (32 MiB) is just too small for N=2^15, r=8.
const MAX_MEM = 256 * 1024 * 1024;

function scryptAsync(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  // The async form runs on libuv's thread pool, so a sign-in never blocks the event loop.
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Hashes a password with a fresh random salt: `scrypt$N=32768,r=8,p=3$<salt base64>$<key base64>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scryptAsync(password, salt, KEY_BYTES, { ...COST, maxmem: MAX_MEM });
  return `scrypt$N=${COST.N},r=${COST.r},p=${COST.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const STORED = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** Whether `password` matches a hash made by `hashPassword`, compared in constant time. A malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Refuse absurd parameters from a tampered row rather than let them eat the machine.
  if (N > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  if (expected.length < 16) return false;
  const key = await scryptAsync(password, Buffer.from(m[4]!, 'base64'), expected.length, { N, r, p, maxmem: MAX_MEM });
  return timingSafeEqual(key, expected);
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends as long as a real verification and answers false. Sign-in calls it for an unknown e-mail, so the
 * response time does not tell which e-mail addresses have an account.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummyHash);
  return false;
}

/** A random password for a new user when none was given: 120 bits, 20 URL-safe characters. */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

/** A new session token (256 random bits, URL-safe) and the SHA-256 that is all the database keeps of it. */
export function newSessionToken(): { token: string; tokenHash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashSessionToken(token) };
}

/** SHA-256 of a session token. A plain hash is enough: the token is 256 random bits, not a password. */
export function hashSessionToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
