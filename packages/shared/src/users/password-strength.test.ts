import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { judgePassword, passwordUserInputs, REQUIRED_PASSWORD_SCORE } from './password-strength.js';
import { changeOwnPassword, createUser, resetUserPassword, signIn } from './users.service.js';

// New console passwords are judged with zxcvbn (the user's e-mail as user input) and the common-password list:
// the weak ones the issue names are refused with zxcvbn's feedback at the field; a passphrase passes.

const EMAIL = 'casey.jones@ops.example.com';
const WEAK = ['aaaaaaaaaaaa', EMAIL, 'Tr0ub4dor&3xx', 'casey.jones.ops', 'qwertyuiop123', 'correct horse battery staple'];
const STRONG = 'velvet otter drums quietly';

describe('judgePassword', () => {
  it(`refuses the weak ones below score ${REQUIRED_PASSWORD_SCORE}, saying why and what would do`, async () => {
    for (const p of WEAK) {
      const s = await judgePassword(p, { email: EMAIL });
      expect(s.ok, p).toBe(false);
      expect(s.score, p).toBeLessThan(REQUIRED_PASSWORD_SCORE);
      expect(s.suggestions.length, p).toBeGreaterThan(0);
      // zxcvbn's feedback, or the common-password list's words for a password on it.
      expect(s.message, p).toMatch(
        /^too easy to guess \(strength \d of 4, 3 needed\): .*A few unrelated words make a strong one\.$|most common passwords/,
      );
    }
    expect((await judgePassword('aaaaaaaaaaaa', { email: EMAIL })).warning).toMatch(/Repeated characters/);
    expect((await judgePassword(EMAIL, { email: EMAIL })).warning).toMatch(/personal/);
    expect((await judgePassword('Tr0ub4dor&3xx', { email: EMAIL })).warning).toMatch(/published as an example/);
  });

  it("the user's own e-mail and its pieces count: what passes for one user is refused for the one it names", async () => {
    expect(passwordUserInputs({ email: EMAIL })).toEqual(
      expect.arrayContaining([EMAIL, 'casey.jones', 'casey', 'jones', 'ops', 'example']),
    );
    const p = 'casey.jones.ops';
    expect(await judgePassword(p, { email: 'someone@else.test' })).toMatchObject({ ok: true });
    expect(await judgePassword(p, { email: EMAIL })).toMatchObject({ ok: false, warning: expect.stringMatching(/personal/) });
  });

  it('accepts a passphrase of a few unrelated words', async () => {
    expect(await judgePassword(STRONG, { email: EMAIL })).toMatchObject({ ok: true, message: '' });
  });
});

describe('where a password is set', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(inject('templateDatabaseUrl'));
  });
  afterAll(() => t?.drop());

  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: { code: string; message: string; details: { field?: string; strength?: unknown } }) => ({
        code: e.code,
        field: e.details.field,
        message: e.message,
        strength: e.details.strength,
      }),
    );

  it('a new user, an admin reset and your own change refuse the weak ones with the feedback, and take a passphrase', async () => {
    for (const password of ['aaaaaaaaaaaa', EMAIL, 'Tr0ub4dor&3xx']) {
      const r = await refusal(t.db.transaction().execute((trx) => createUser(trx, { email: EMAIL, role: 'viewer', password }, 'test')));
      expect(r, password).toMatchObject({
        code: 'INVALID_USER',
        field: 'password',
        message: expect.stringMatching(/^password: too easy to guess/),
        strength: { score: expect.any(Number), required: 3, suggestions: expect.arrayContaining([expect.any(String)]) },
      });
    }
    expect(await t.db.selectFrom('console_users').select('id').where('email', '=', EMAIL).execute()).toEqual([]);

    const { user } = await t.db.transaction().execute((trx) => createUser(trx, { email: EMAIL, role: 'viewer', password: STRONG }, 'test'));
    const admin = { id: 'admin-id', email: 'admin@ops.example.com' };
    for (const password of ['aaaaaaaaaaaa', EMAIL, 'Tr0ub4dor&3xx'])
      expect(
        await refusal(t.db.transaction().execute((trx) => resetUserPassword(trx, { userId: user.id, password }, admin))),
        password,
      ).toMatchObject({ code: 'INVALID_PASSWORD', field: 'password', message: expect.stringMatching(/too easy to guess/) });
    for (const newPassword of ['aaaaaaaaaaaa', EMAIL, 'Tr0ub4dor&3xx'])
      expect(
        await refusal(t.db.transaction().execute((trx) => changeOwnPassword(trx, user.id, { currentPassword: STRONG, newPassword }, null))),
        newPassword,
      ).toMatchObject({ code: 'INVALID_PASSWORD', field: 'newPassword', message: expect.stringMatching(/too easy to guess/) });
    // Nothing changed: the passphrase still signs in.
    expect((await signIn(t.db, { email: EMAIL, password: STRONG })).user.email).toBe(EMAIL);
  });
});
