import { describe, expect, it } from 'vitest';
import { DatabaseHealth, databaseFaultOf, isConnectionLost, markDatabaseFault, statementNeverRan } from './faults.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
/** An error answer from the PostgreSQL server (pg's DatabaseError carries a severity and a SQLSTATE). */
const fromServer = (code: string, severity: string, message = 'x') => Object.assign(new Error(message), { code, severity });
/** What createDb's pool marks: a failure met while obtaining a connection or on a connection lost. */
const atConnect = (err: Error) => markDatabaseFault(err, 'unavailable');

describe('databaseFaultOf: by where the failure happened', () => {
  it.each([
    ['refused while connecting', atConnect(withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))],
    ['reset while connecting', atConnect(withCode('ECONNRESET', 'read ECONNRESET'))],
    ['a rotated password', atConnect(fromServer('28P01', 'FATAL', 'password authentication failed for user "onsale"'))],
    ['a database missing', atConnect(fromServer('3D000', 'FATAL', 'database "onsale" does not exist'))],
    ['not accepting connections', atConnect(fromServer('55000', 'FATAL', 'database "onsale" is not currently accepting connections'))],
    ['a code nobody listed, while connecting', atConnect(withCode('EWHATEVER', 'something new'))],
    ['too many connections for a role', fromServer('53300', 'FATAL', 'too many connections for role "onsale"')],
    ['the server ending the session', fromServer('57P01', 'FATAL', 'terminating connection due to administrator command')],
    ['starting up', fromServer('57P03', 'FATAL', 'the database system is starting up')],
    ['terminated (the driver)', new Error('Connection terminated unexpectedly')],
    ['pool wait (the driver)', new Error('timeout exceeded when trying to connect')],
    ['not queryable (the driver)', new Error('Client has encountered a connection error and is not queryable')],
    [
      'a marked error wrapped in an AggregateError',
      new AggregateError([atConnect(withCode('ECONNREFUSED')), withCode('ECONNREFUSED')], ''),
    ],
    ['a marked error as a cause', new Error('query failed', { cause: atConnect(withCode('ECONNRESET')) })],
    ['a non-object thrown while connecting', markDatabaseFault('boom', 'unavailable')],
  ])('%s is unavailable', (_name, err) => expect(databaseFaultOf(err)).toBe('unavailable'));

  it.each([
    ['statement timeout', fromServer('57014', 'ERROR', 'canceling statement due to statement timeout')],
    ['lock timeout', fromServer('55P03', 'ERROR')],
    ['deadlock', fromServer('40P01', 'ERROR')],
    ['serialization', fromServer('40001', 'ERROR')],
  ])('%s is busy', (_name, err) => expect(databaseFaultOf(err)).toBe('busy'));

  it.each([
    // A client that hung up on the HTTP server mid-body: Node's IncomingMessage says 'aborted' with ECONNRESET.
    ['a client aborting its request (ECONNRESET, not from a database connection)', withCode('ECONNRESET', 'aborted')],
    ['an unmarked refused socket (some other service)', withCode('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:443')],
    ['an unmarked 55000 outside connecting (an object in the wrong state)', fromServer('55000', 'ERROR', 'cannot execute in this state')],
    ['a syntax error', fromServer('42601', 'ERROR', 'syntax error at or near "x"')],
    ['a unique violation', fromServer('23505', 'ERROR', 'duplicate key value')],
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
    expect(h.noteError(atConnect(withCode('ECONNREFUSED', 'connect ECONNREFUSED')))).toBe('unavailable');
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
    expect(h.noteError(fromServer('57014', 'ERROR'))).toBe('busy'); // a statement refused under load is no outage
    expect(h.up).toBe(true);
  });
});
