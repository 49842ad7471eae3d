import type { Command } from './command.js';
import { CliError } from './errors.js';

// The client's half of the bot gate's proof-of-work, for scripts and the curl tour: a browser page solves the
// challenge in JavaScript; a shell pipes the join's response here. The rule (what solves a challenge) is
// @onsale/shared/abuse's.

export const POW_USAGE = `  pow:solve                    read a queue join's response (403 CHALLENGE_REQUIRED or 410 POW_EXPIRED, or the
                               challenge itself) on standard input and print the X-Proof-Of-Work value that
                               answers it; prints nothing for a response without a challenge (the join passed)`;

/** The challenge in a join's response body, or the body itself when it is one; null when there is none. */
function challengeOf(body: unknown): { token: string; nonce: string; difficulty: number } | null {
  const c = body !== null && typeof body === 'object' && 'challenge' in body ? body.challenge : body;
  if (c === null || typeof c !== 'object') return null;
  const { token, nonce, difficulty } = c as Record<string, unknown>;
  if (token === undefined && nonce === undefined) return null;
  if (
    typeof token !== 'string' ||
    typeof nonce !== 'string' ||
    typeof difficulty !== 'number' ||
    !Number.isInteger(difficulty) ||
    difficulty < 1 ||
    difficulty > 32
  )
    throw new CliError('INVALID_CHALLENGE', 'the challenge needs a string token and nonce and a difficulty of 1-32 bits');
  return { token, nonce, difficulty };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const powCommands: Record<string, Command> = {
  'pow:solve': {
    options: {},
    positionals: [],
    async run({ io }) {
      const input = (await readStdin()).trim();
      if (input === '') throw new CliError('NO_INPUT', 'pipe the join response (JSON) into pow:solve');
      let body: unknown;
      try {
        body = JSON.parse(input);
      } catch {
        throw new CliError('INVALID_JSON', 'standard input is not JSON; pipe the join response body into pow:solve');
      }
      const challenge = challengeOf(body);
      if (!challenge) return;
      const { solveChallenge } = await import('@onsale/shared/abuse');
      io.out(`${challenge.token}:${solveChallenge(challenge.nonce, challenge.difficulty)}`);
    },
  },
};
