import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { DomainError } from '../errors.js';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { clientAddressKey, DEFAULT_SIGN_IN_THROTTLE } from './sign-in-throttle.service.js';
import { checkPassword, createUser, resetUserPassword, signIn, type CheckPassword } from './users.service.js';

// Counted, not stood in for: the real scrypt runs (sign-in's own `checkPassword`); the tests count how often sign-in
// reached it. Passed to signIn, not mocked into the module, so the file can share modules with others (isolate: false).
let scryptCount = 0;
const countedCheck: CheckPassword = (password, storedHash) => {
  scryptCount++;
  return checkPassword(password, storedHash);
};
const scryptCalls = () => scryptCount;

let t: TestDatabase;
const PASSWORD = 'the right password here';

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
  await t.db.transaction().execute(async (trx) => {
    for (const email of [
      'ada@throttle.test',
      'bob@throttle.test',
      'cy@throttle.test',
      'dee@throttle.test',
      'eve@throttle.test',
      'fay@throttle.test',
    ])
      await createUser(trx, { email, role: 'viewer', password: PASSWORD }, 'test');
  });
});
afterAll(() => t?.drop());

/** A clock the test moves. */
function clock(start = Date.parse('2030-01-01T10:00:00Z')) {
  let ms = start;
  return { now: () => new Date(ms), advance: (seconds: number) => void (ms += seconds * 1000) };
}

// Each test's e-mails come from an address of their own, so the per-address count of one test does not reach another's.
const addresses = new Map<string, string>([['ada@throttle.test', '198.51.100.7']]);
const addressOf = (email: string) => addresses.get(email) ?? addresses.set(email, `198.51.100.${100 + addresses.size}`).get(email)!;

// Each wrong password costs a real scrypt (about a second on a busy machine): tests of the longer sequences use
// smaller limits than the defaults, which the first tests check as they are.
const SMALL = { ...DEFAULT_SIGN_IN_THROTTLE, maxFailuresPerEmail: 2, maxFailuresPerIp: 6 };

async function attempt(email: string, pw: string, at: Date, ip: string | null = addressOf(email), throttle = DEFAULT_SIGN_IN_THROTTLE) {
  return signIn(t.db, { email, password: pw }, { now: at, ip, throttle, checkPassword: countedCheck }).then(
    () => 'ok' as const,
    (e: unknown) => {
      if (!(e instanceof DomainError)) throw e;
      return e;
    },
  );
}

const codeOf = (r: 'ok' | DomainError) => (r === 'ok' ? 'ok' : r.code);
const audits = (email: string) =>
  t.db
    .selectFrom('audit_log')
    .select(['actor', 'action', 'details'])
    .where('action', '=', 'console_user.sign_in_locked')
    .where(sql<string>`details->>'email'`, '=', email)
    .orderBy('id')
    .execute();

describe('sign-in throttling per e-mail', () => {
  it('after 5 failures in 15 minutes the e-mail is locked: 429-kind SIGN_IN_THROTTLED with Retry-After, no scrypt, audited', async () => {
    const c = clock();
    for (let i = 0; i < 5; i++) {
      expect(codeOf(await attempt('ada@throttle.test', 'wrong password', c.now()))).toBe('INVALID_CREDENTIALS');
      c.advance(60);
    }
    const before = scryptCalls();
    const refused = await attempt('ada@throttle.test', PASSWORD, c.now());
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({
      kind: 'throttled',
      code: 'SIGN_IN_THROTTLED',
      details: { field: 'email', scope: 'email', retryAfterSeconds: 900 },
    });
    // Even the right password is not checked while locked.
    expect(scryptCalls()).toBe(before);
    c.advance(100);
    expect(await attempt('ada@throttle.test', PASSWORD, c.now())).toMatchObject({ details: { retryAfterSeconds: 800 } });
    expect(scryptCalls()).toBe(before);

    const entries = await audits('ada@throttle.test');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: 'sign-in:198.51.100.7',
      details: { scope: 'email', failures: 5, lockoutsInARow: 1, retryAfterSeconds: 900 },
    });
  });

  it('each lockout in a row lasts twice as long; the right password after one clears the count', async () => {
    const c = clock();
    const bob = (pw: string) => attempt('bob@throttle.test', pw, c.now(), addressOf('bob@throttle.test'), SMALL);
    const lockOut = async (expectedSeconds: number) => {
      for (let i = 0; i < SMALL.maxFailuresPerEmail; i++) expect(codeOf(await bob('wrong password'))).toBe('INVALID_CREDENTIALS');
      expect(await bob('wrong password')).toMatchObject({ code: 'SIGN_IN_THROTTLED', details: { retryAfterSeconds: expectedSeconds } });
    };
    await lockOut(900);
    c.advance(901);
    await lockOut(1800);
    c.advance(1801);
    await lockOut(3600);
    expect((await audits('bob@throttle.test')).map((a) => (a.details as { lockoutsInARow: number }).lockoutsInARow)).toEqual([1, 2, 3]);
    c.advance(3601);
    expect(await bob(PASSWORD)).toBe('ok');
    // Cleared: as many failures again before the next lockout, which starts short again.
    await lockOut(900);
  });

  it('failures older than the window do not count', async () => {
    const c = clock();
    const cy = (pw: string) => attempt('cy@throttle.test', pw, c.now(), addressOf('cy@throttle.test'), SMALL);
    expect(codeOf(await cy('wrong password'))).toBe('INVALID_CREDENTIALS');
    c.advance(SMALL.windowSeconds + 1);
    for (let i = 0; i < SMALL.maxFailuresPerEmail; i++) expect(codeOf(await cy('wrong password'))).toBe('INVALID_CREDENTIALS');
    expect(codeOf(await cy(PASSWORD))).toBe('SIGN_IN_THROTTLED');
  });

  it('a success clears the count; unknown e-mails are counted (and locked) alike', async () => {
    const c = clock();
    const as = (email: string, pw: string) => attempt(email, pw, c.now(), addressOf(email), SMALL);
    expect(codeOf(await as('dee@throttle.test', 'wrong password'))).toBe('INVALID_CREDENTIALS');
    expect(await as('dee@throttle.test', PASSWORD)).toBe('ok');
    expect(codeOf(await as('dee@throttle.test', 'wrong password'))).toBe('INVALID_CREDENTIALS');
    expect(await as('dee@throttle.test', PASSWORD)).toBe('ok');

    for (let i = 0; i < SMALL.maxFailuresPerEmail; i++)
      expect(codeOf(await as('nobody@throttle.test', 'wrong password'))).toBe('INVALID_CREDENTIALS');
    expect(codeOf(await as('nobody@throttle.test', 'wrong password'))).toBe('SIGN_IN_THROTTLED');
  });

  it('attempts sent at once are counted before any is checked: of 12 at once, 5 are checked and 7 refused', async () => {
    const now = clock().now();
    const before = scryptCalls();
    const results = await Promise.all(Array.from({ length: 12 }, () => attempt('eve@throttle.test', 'wrong password', now)));
    const codes = results.map(codeOf).sort();
    expect(codes.filter((c) => c === 'INVALID_CREDENTIALS')).toHaveLength(5);
    expect(codes.filter((c) => c === 'SIGN_IN_THROTTLED')).toHaveLength(7);
    expect(scryptCalls() - before).toBe(5);
    expect(await audits('eve@throttle.test')).toHaveLength(1);
  });

  it("an admin's new password lifts the lockout", async () => {
    const c = clock();
    const fay = (pw: string) => attempt('fay@throttle.test', pw, c.now(), addressOf('fay@throttle.test'), SMALL);
    for (let i = 0; i < 3; i++) await fay('wrong password');
    expect(codeOf(await fay(PASSWORD))).toBe('SIGN_IN_THROTTLED');
    const row = await t.db.selectFrom('console_users').select('id').where('email', '=', 'fay@throttle.test').executeTakeFirstOrThrow();
    await t.db
      .transaction()
      .execute((trx) =>
        resetUserPassword(trx, { userId: row.id, password: 'a brand new long password' }, { id: 'admin', email: 'admin@throttle.test' }),
      );
    expect(await fay('a brand new long password')).toBe('ok');
  });
});

describe('sign-in throttling per client address', () => {
  it('a full count of failures from one address within the window locks the address, whatever e-mail comes next', async () => {
    const c = clock();
    const ip = '203.0.113.50';
    // One failure per e-mail: only the address's count can lock.
    for (let i = 0; i < SMALL.maxFailuresPerIp; i++)
      expect(codeOf(await attempt(`spray-${i}@throttle.test`, 'wrong password', c.now(), ip, SMALL))).toBe('INVALID_CREDENTIALS');
    const before = scryptCalls();
    expect(await attempt('spray-next@throttle.test', PASSWORD, c.now(), ip, SMALL)).toMatchObject({
      code: 'SIGN_IN_THROTTLED',
      details: { scope: 'ip', field: 'password', retryAfterSeconds: 900 },
    });
    expect(scryptCalls()).toBe(before);
    // Another address is not affected.
    expect(codeOf(await attempt('spray-new@throttle.test', 'wrong password', c.now(), '203.0.113.51', SMALL))).toBe('INVALID_CREDENTIALS');
    const entry = await t.db
      .selectFrom('audit_log')
      .select(['details'])
      .where('action', '=', 'console_user.sign_in_locked')
      .where('actor', '=', `sign-in:${ip}`)
      .executeTakeFirstOrThrow();
    expect(entry.details).toMatchObject({ scope: 'ip', ip, failures: SMALL.maxFailuresPerIp });
  });

  it('an IPv6 client counts as its /64; an IPv4-mapped address as its IPv4', () => {
    expect(clientAddressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientAddressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddressKey('192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddressKey('not an address')).toBeNull();
    expect(clientAddressKey(undefined)).toBeNull();
  });
});
