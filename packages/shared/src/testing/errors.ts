import { DomainError } from '../errors.js';

/** The DomainError a promise rejects with (any other outcome fails the test), for asserting code and field. */
export async function domainError(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
}
