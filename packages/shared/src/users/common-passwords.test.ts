import { describe, expect, it } from 'vitest';
import { isCommonPassword } from './common-passwords.js';

describe('common passwords', () => {
  it('refuses passwords on the list whatever their case or width, and 12+ character ones the length rule lets through', async () => {
    for (const p of ['password', 'PASSWORD', 'qwerty123456', '1qaz2wsx3edc', 'LeaveMeAlone', 'ｐａｓｓｗｏｒｄ１２３４'])
      expect(await isCommonPassword(p), p).toBe(true);
  });

  it('refuses a common password padded with digits and symbols, or repeated', async () => {
    for (const p of ['sunshine2024!', '!!dragon12345', 'iloveyou1234', 'monkeymonkey', 'football!!!!', 'abc123abc123'])
      expect(await isCommonPassword(p), p).toBe(true);
  });

  it('accepts passphrases and random passwords, even ones that contain a common word', async () => {
    for (const p of [
      'a long enough password',
      'correct horse battery staple',
      'purple-otter-carries-maps',
      'Xk9#mQ2v!pL7wR',
      'dragonfly lantern 42',
      'password of admin@example.com',
    ])
      expect(await isCommonPassword(p), p).toBe(false);
  });
});
