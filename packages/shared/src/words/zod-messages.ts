import { z } from 'zod';

// Plain words for every zod issue a person may read, in the console, the CLI and the BFF alike: a schema that gives
// its own message keeps it; anything it leaves to zod reads as one of these instead of "Too small: expected string to
// have >=1 characters". Installed once, when a schema module of @onsale/shared is first imported (it imports this).

const count = (n: unknown) => (typeof n === 'bigint' || typeof n === 'number' ? Number(n).toLocaleString('en-US') : String(n));

const FORMATS: Record<string, string> = {
  datetime: 'enter a date and time',
  date: 'enter a date',
  time: 'enter a time of day',
  email: 'enter an e-mail address, such as name@example.com',
  url: 'enter a web address, such as https://example.com/hook',
  uuid: 'this is not a valid id',
  guid: 'this is not a valid id',
  regex: 'use only the characters allowed here',
};

const TYPES: Record<string, string> = {
  number: 'enter a number',
  int: 'enter a whole number',
  string: 'enter some text',
  boolean: 'choose yes or no',
  array: 'give a list',
  object: 'give the details',
  date: 'enter a date',
};

/** The plain-words message for a zod issue that its schema left without one. */
export function plainMessage(issue: { code?: string; input?: unknown; [k: string]: unknown }): string {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined || issue.input === null || issue.input === '') return 'fill this in';
      if (typeof issue.input === 'number' && Number.isNaN(issue.input)) return 'enter a number';
      return TYPES[String(issue.expected)] ?? 'this is not the right kind of value';
    }
    case 'too_small': {
      const min = issue.minimum;
      if (issue.origin === 'string') return Number(min) <= 1 ? 'fill this in' : `enter at least ${count(min)} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return Number(min) <= 1 ? 'add at least one' : `add at least ${count(min)}`;
      return issue.inclusive === false ? `enter a number above ${count(min)}` : `enter ${count(min)} or more`;
    }
    case 'too_big': {
      const max = issue.maximum;
      if (issue.origin === 'string') return `enter at most ${count(max)} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return `at most ${count(max)} are allowed`;
      return issue.inclusive === false ? `enter a number below ${count(max)}` : `enter ${count(max)} or less`;
    }
    case 'invalid_format':
      return FORMATS[String(issue.format)] ?? 'this is not in the expected form';
    case 'not_multiple_of':
      return `enter a multiple of ${count(issue.divisor)}`;
    case 'unrecognized_keys': {
      const keys = (issue.keys as string[] | undefined) ?? [];
      return `remove ${keys.length === 1 ? 'the unknown setting' : 'the unknown settings'} ${keys.map((k) => `"${k}"`).join(', ')}`;
    }
    case 'invalid_value': {
      const values = (issue.values as unknown[] | undefined) ?? [];
      return values.length > 0 ? `choose one of ${values.map(String).join(', ')}` : 'choose one of the allowed values';
    }
    case 'invalid_union':
    case 'invalid_key':
    case 'invalid_element':
    default:
      return 'check this value';
  }
}

z.config({ customError: (issue) => plainMessage(issue) });
