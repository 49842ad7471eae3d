import type pino from 'pino';
import { databaseFaultOf, type DatabaseHealth } from '../db/faults.js';

/** The error a pino call carries: its first argument when that is an Error, else that object's `err` or `error`. */
function errorOf(first: unknown): unknown {
  if (!first || typeof first !== 'object') return undefined;
  if (first instanceof Error) return first;
  const o = first as { err?: unknown; error?: unknown };
  return o.err ?? o.error;
}

/**
 * `logger`, except that a warning or an error about a database that cannot be reached is not written: it is counted
 * in `health` instead, whose outage is logged once when it starts and once when it ends (logOutages). So the
 * worker's every beat, tick and job that meets an outage adds one to its count rather than a warning with a stack.
 * Anything else (a bug, a statement refused under load, a job's own failure) is written as before.
 */
export function quietDuringOutages(logger: pino.Logger, health: DatabaseHealth): pino.Logger {
  const quiet =
    (level: 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const err = errorOf(args[0]);
      if (err !== undefined && databaseFaultOf(err) === 'unavailable') {
        health.noteError(err);
        return;
      }
      Reflect.apply(logger[level], logger, args);
    };
  return Object.create(logger, { warn: { value: quiet('warn') }, error: { value: quiet('error') } }) as pino.Logger;
}

/**
 * graphile-worker's log function (its Logger's factory): errors and warnings to `logger`; the ones whose `error`
 * is a database that cannot be reached only counted in `health`, as quietDuringOutages does.
 */
export function graphileLogFunction(logger: pino.Logger | undefined, health: DatabaseHealth) {
  return (level: string, message: string, meta?: { error?: unknown }) => {
    if (level !== 'error' && level !== 'warning') return;
    if (meta?.error !== undefined && databaseFaultOf(meta.error) === 'unavailable') {
      health.noteError(meta.error);
      return;
    }
    if (!logger) return;
    if (level === 'error') logger.error(message);
    else logger.warn(message);
  };
}
