import { userInfo } from 'node:os';
import type { ParseArgsConfig } from 'node:util';
import type { Io } from './commands.js';
import { UsageError } from './errors.js';

export type Values = Record<string, string | boolean | undefined>;

/** One CLI command: its flags, its positional arguments by name, and what it does. */
export interface Command {
  options: NonNullable<ParseArgsConfig['options']>;
  positionals: string[];
  run(args: { values: Values; positionals: string[]; io: Io }): Promise<void>;
}

/** A string flag's value (a bare boolean flag reads as absent). */
export const text = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/** How commands print results: indented JSON. */
export const json = (v: unknown) => JSON.stringify(v, null, 2);

/** A whole-number flag, or a usage error naming it (the domain checks the range). */
export function wholeNumber(name: string, v: string | boolean | undefined): number | undefined {
  const s = text(v);
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s)) throw new UsageError(`${name} must be a whole number; got ${JSON.stringify(s)}`);
  return Number(s);
}

/** Who the audit log names when --actor is not given: `cli:<os user>`. */
export function defaultActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli:unknown';
  }
}
