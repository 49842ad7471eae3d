import { afterEach, describe, expect, it } from 'vitest';
import { withoutProcessHooks } from './process-hooks.js';

const ours = () => {};
afterEach(() => void process.removeListener('SIGHUP', ours));

describe('withoutProcessHooks', () => {
  it('takes out the listeners its callback added, keeps those there before, and returns what the callback made', async () => {
    process.on('SIGHUP', ours);
    const theirs = () => {};
    const made = await withoutProcessHooks(['SIGHUP'], async () => {
      process.on('SIGHUP', theirs);
      return 'server';
    });
    expect(made).toBe('server');
    expect(process.listeners('SIGHUP')).toContain(ours);
    expect(process.listeners('SIGHUP')).not.toContain(theirs);
  });

  it('takes them out when the callback fails too', async () => {
    const theirs = () => {};
    await expect(
      withoutProcessHooks(['SIGHUP'], () => {
        process.on('SIGHUP', theirs);
        throw new Error('no server');
      }),
    ).rejects.toThrow('no server');
    expect(process.listeners('SIGHUP')).not.toContain(theirs);
  });
});
