import { describe, expect, it } from 'vitest';
import { DatabaseHealth, databaseFaultOf, isConnectionLost, statementNeverRan } from './faults.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('databaseFaultOf', () => {
  it.each([
    ['refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['reset', withCode('ECONNRESET', 'read ECONNRESET')],
    ['terminated', new Error('Connection terminated unexpectedly')],
    ['starting up', withCode('57P03', 'the database system is starting up')],
    ['shutting down', withCode('57P01', 'terminating connection due to administrator command')],
    ['pool wait', new Error('timeout exceeded when trying to connect')],
    ['not queryable', new Error('Client has encountered a connection error and is not queryable')],
    ['too many connections', withCode('53300', 'sorry, too many clients already')],
    ['wrapped in an AggregateError', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')],
    ['as a cause', new Error('query failed', { cause: withCode('ECONNRESET') })],
  ])('%s is unavailable', (_name, err) => expect(databaseFaultOf(err)).toBe('unavailable'));

  it.each([
    ['statement timeout', withCode('57014', 'canceling statement due to statement timeout')],
    ['lock timeout', withCode('55P03')],
    ['deadlock', withCode('40P01')],
    ['serialization', withCode('40001')],
  ])('%s is busy', (_name, err) => expect(databaseFaultOf(err)).toBe('busy'));

  it.each([
    ['a syntax error', withCode('42601', 'syntax error at or near "x"')],
    ['a unique violation', withCode('23505', 'duplicate key value')],
    ['a bug', new TypeError('x is undefined')],
    ['a server error that mentions a connection', withCode('XX000', 'connection terminated by a trigger')],
    ['nothing', undefined],
  ])('%s is not a database fault', (_name, err) => expect(databaseFaultOf(err)).toBeNull());
});

describe('isConnectionLost', () => {
  it('the server ending the session, a reset or closed socket, a client pg gave up on; not a statement error', () => {
    const pgError = (code: string, severity: string) => Object.assign(new Error('x'), { code, severity });
    expect(isConnectionLost(pgError('57P01', 'FATAL'))).toBe(true);
    expect(isConnectionLost(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isConnectionLost(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionLost(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isConnectionLost(pgError('57014', 'ERROR'))).toBe(false); // a statement timeout: the session goes on
    expect(isConnectionLost(pgError('23505', 'ERROR'))).toBe(false);
    expect(isConnectionLost(new Error('timeout exceeded when trying to connect'))).toBe(false);
  });
});

describe('statementNeverRan', () => {
  it('the server ended the session in answer, or pg refused to send; not a socket lost while the statement was out', () => {
    const pgError = (code: string, severity: string) => Object.assign(new Error('x'), { code, severity });
    expect(statementNeverRan(pgError('57P01', 'FATAL'))).toBe(true);
    expect(statementNeverRan(pgError('57P02', 'PANIC'))).toBe(true);
    expect(statementNeverRan(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(statementNeverRan(new Error('Client was closed and is not queryable'))).toBe(true);
    // The server may have committed the statement before these.
    expect(statementNeverRan(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(statementNeverRan(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBe(false);
    expect(statementNeverRan(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(statementNeverRan(pgError('23505', 'ERROR'))).toBe(false);
  });
});

describe('DatabaseHealth', () => {
  it('one outage: down at the first failure, up at a success after a quiet second, with how many failures it saw', () => {
    let now = 1_000;
    const h = new DatabaseHealth(1000, () => now);
    const events: string[] = [];
    h.on('down', (e) => events.push(`down ${e.at} ${e.error}`));
    h.on('up', (e) => events.push(`up ${e.downForMs} ${e.failures}`));
    h.noteSuccess();
    expect(h.noteError(withCode('23505'))).toBeNull(); // not a fault: no outage
    expect(h.up).toBe(true);
    expect(h.noteError(withCode('ECONNREFUSED', 'connect ECONNREFUSED'))).toBe('unavailable');
    for (let i = 0; i < 50; i++) {
      now += 10;
      h.noteError(new Error('Connection terminated unexpectedly'));
    }
    expect(h.up).toBe(false);
    now += 500;
    h.noteSuccess(); // a success inside the quiet second does not end it (some connections still fail)
    expect(h.up).toBe(false);
    now += 600;
    h.noteSuccess();
    expect(h.up).toBe(true);
    expect(events).toEqual(['down 1000 connect ECONNREFUSED', 'up 1600 51']);
    expect(h.outages).toBe(1);
    expect(h.noteError(withCode('57014'))).toBe('busy'); // a statement refused under load is no outage
    expect(h.up).toBe(true);
  });
});
