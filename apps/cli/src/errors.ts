import type { ErrorCode } from '@onsale/shared';

/** An expected failure of a CLI command: printed as `error CODE: message`, exit 1, no stack trace. */
export class CliError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad command line: usage goes to stderr, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
