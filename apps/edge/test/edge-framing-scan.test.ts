import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadParser, METHODS } from '../src/framing-guard.js';
import { scannedLength, scannedMethod, scanRequest, scanResponseHead } from '../src/framing-scan.js';

// The framing guard's fast path against Node's own HTTP parser (llhttp, strict, as the guard runs it for every
// request the fast path does not take): whatever the fast path accepts, llhttp accepts too, as one whole request
// (or answer) ending at the same byte, with the connection kept open, so the guard hands llhttp the bytes that
// follow in the state llhttp starts in. Anything else the fast path leaves to llhttp, which refuses what it refused.

// The guard's own handle on llhttp (Node's `_http_common`), not a second declaration of it.
const HTTPParser = loadParser();
const methods = METHODS;

/** What llhttp (strict) makes of `bytes` as requests: each request's method, target, keep-alive and upgrade, and where the parse stopped. */
function llhttpRequests(bytes: Buffer) {
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {}, 0, HTTPParser.kLenientNone);
  const heads: { method: string; url: string; keepAlive: boolean; upgrade: boolean }[] = [];
  let completed = 0;
  const noop = () => 0;
  p[HTTPParser.kOnHeaders] = noop;
  p[HTTPParser.kOnBody] = noop;
  p[HTTPParser.kOnExecute] = noop;
  p[HTTPParser.kOnHeadersComplete] = (...a: unknown[]) => {
    heads.push({ method: methods[a[3] as number]!, url: a[4] as string, upgrade: a[7] as boolean, keepAlive: a[8] as boolean });
    return 0;
  };
  p[HTTPParser.kOnMessageComplete] = () => {
    completed++;
    return 0;
  };
  const r = p.execute(bytes);
  p.close();
  return { heads, completed, error: typeof r === 'number' ? null : r };
}

/** How many answers llhttp completes in `bytes` (strict), the first one's status, and whether it failed. */
function llhttpAnswers(bytes: Buffer, toHead: boolean) {
  const p = new HTTPParser();
  p.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientNone);
  let completed = 0;
  const noop = () => 0;
  p[HTTPParser.kOnHeaders] = noop;
  p[HTTPParser.kOnBody] = noop;
  p[HTTPParser.kOnExecute] = noop;
  p[HTTPParser.kOnHeadersComplete] = () => (toHead ? 1 : 0);
  p[HTTPParser.kOnMessageComplete] = () => {
    completed++;
    return 0;
  };
  const r = p.execute(bytes);
  p.close();
  return { completed, error: typeof r === 'number' ? null : r };
}

/** The fast path's promise about a request it accepted: llhttp reads it whole, ending where the fast path says. */
function agreesOnRequest(bytes: Buffer): boolean {
  const end = scanRequest(bytes, 0, bytes.length);
  if (end < 0) return false;
  const method = scannedMethod;
  const whole = llhttpRequests(bytes.subarray(0, end));
  expect(whole.error).toBeNull();
  expect(whole.completed).toBe(1);
  expect(whole.heads).toHaveLength(1);
  expect(whole.heads[0]).toMatchObject({ method, keepAlive: true, upgrade: false });
  expect(whole.heads[0]!.url.startsWith('/')).toBe(true);
  // Not a byte sooner: without its last byte it is not a whole request.
  expect(llhttpRequests(bytes.subarray(0, end - 1)).completed).toBe(0);
  return true;
}

/** The fast path's promise about an answer's head: llhttp completes the answer exactly at the head plus the stated length. */
function agreesOnAnswer(bytes: Buffer, toHead: boolean): boolean {
  const head = scanResponseHead(bytes, 0, bytes.length, toHead);
  if (head < 0) return false;
  const end = head + scannedLength;
  expect(end).toBeLessThanOrEqual(bytes.length);
  const whole = llhttpAnswers(bytes.subarray(0, end), toHead);
  expect(whole.error).toBeNull();
  expect(whole.completed).toBe(1);
  expect(llhttpAnswers(bytes.subarray(0, end - 1), toHead).completed).toBe(0);
  return true;
}

const poll = (eventId: string) =>
  `GET /events/${eventId}/queue/status HTTP/1.1\r\nhost: 127.0.0.1:8787\r\nauthorization: Bearer ${'a'.repeat(180)}\r\n` +
  `x-device-id: edge-bench-device-123\r\nx-queue-token: ${'q'.repeat(320)}\r\naccept-language: fr-CA,fr;q=0.9, en;q=0.5\r\n\r\n`;

// The same list as edge-framing.test.ts's, and more: none of them may be taken by the fast path.
const MALFORMED = [
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'GET http://evil.example/events/x HTTP/1.1\r\nHost: a\r\n\r\n',
  'HELLO\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost : a\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nX-A: a\r\n b\r\n\r\n',
  'GET /events/ok HTTP/1.1\nHost: a\n\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nUPGRADE: websocket\r\n\r\n',
  'CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nconnection: close\r\n\r\nGET /events/ok HTTP/1.1\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nproxy-connection: close\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\ncontent-length: 0\r\n\r\n',
  'GET /events/ok HTTP/1.0\r\nHost: a\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nX: \x01\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nX: \x7f\r\n\r\n',
  'GET /events/ok HTTP/1.1\r\nHost: a\r\nX: \xe9\r\n\r\n',
  'GET /ev ents HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET /events#x HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET  /events HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET /events HTTP/1.1 \r\nHost: a\r\n\r\n',
  'GET /events HTTP/1.1\r\n\tHost: a\r\n\r\n',
  'GET /events HTTP/1.1\r\nHost: a\r\r\n\r\n',
  'GET /events HTTP/1.1\r\nHost: a\r\n\n',
  'get /events HTTP/1.1\r\nHost: a\r\n\r\n',
  `GET /events HTTP/1.1\r\nX: ${'a'.repeat(9000)}\r\n\r\n`,
];

describe("the framing guard's fast path", () => {
  it('takes a status poll as a browser or the crowd sends it, and a HEAD, and several in one chunk', () => {
    const one = poll('5b0e8e2c-3c4e-4d7e-9d55-1f7b1c2a9e01');
    expect(agreesOnRequest(Buffer.from(one))).toBe(true);
    expect(agreesOnRequest(Buffer.from('HEAD /e/assets/app.js?v=3 HTTP/1.1\r\nHost: a\r\n\r\n'))).toBe(true);
    expect(scannedMethod).toBe('HEAD');
    // As undici (the rehearsal's crowd) and every HTTP/1.1 browser send it: `Connection: keep-alive` on every request.
    const kept = one.replace('\r\nhost:', '\r\nconnection: keep-alive\r\nhost:');
    expect(agreesOnRequest(Buffer.from(kept))).toBe(true);
    expect(agreesOnRequest(Buffer.from('GET /a HTTP/1.1\r\nHost: a\r\nConnection:\tKeep-Alive\r\n\r\n'))).toBe(true);
    const two = Buffer.from(one + one);
    const first = scanRequest(two, 0, two.length);
    expect(first).toBe(one.length);
    expect(scanRequest(two, first, two.length)).toBe(two.length);
    // A request not yet whole is llhttp's to read.
    expect(scanRequest(Buffer.from(one.slice(0, -1)), 0, one.length - 1)).toBe(-1);
  });

  it('leaves every malformed request to llhttp (which refuses each one the guard refused)', () => {
    for (const text of MALFORMED) expect(scanRequest(Buffer.from(text, 'latin1'), 0, Buffer.byteLength(text, 'latin1')), text).toBe(-1);
  });

  it('leaves any Connection header but a lone keep-alive to llhttp', () => {
    for (const value of [
      'close',
      'upgrade',
      'keep-alive, upgrade',
      'keep-alive,close',
      'keep-alive ',
      'keep-alivex',
      'keep',
      '',
      'Upgrade, keep-alive',
    ]) {
      const text = `GET /events/ok HTTP/1.1\r\nHost: a\r\nConnection: ${value}\r\n\r\n`;
      expect(scanRequest(Buffer.from(text), 0, text.length), value).toBe(-1);
    }
  });

  it('any request it takes, llhttp takes too, whole, ending at the same byte, the connection kept open', () => {
    // Each part mostly well formed (so that many requests are plain enough for the fast path), sometimes anything.
    const mostly = <T>(plain: fc.Arbitrary<T>, odd: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: plain, weight: 12 }, { arbitrary: odd, weight: 1 });
    const tchars = "!#$%&'*+-.^_`|~abcXYZ019";
    const anyByte = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
    const name = mostly(
      fc.oneof(
        fc.constantFrom('Host', 'X-A', 'Accept-Language', 'authorization'),
        fc.string({ unit: fc.constantFrom(...tchars), minLength: 1, maxLength: 12 }),
      ),
      fc.oneof(
        fc.constantFrom('Content-Length', 'content-length', 'Transfer-Encoding', 'Connection', 'UPGRADE', 'Proxy-Connection', ''),
        fc.string({ unit: fc.constantFrom(...tchars, ' ', '\t', ':', '\x00', '\xff', '(', '\r'), minLength: 1, maxLength: 6 }),
      ),
    );
    const value = mostly(
      fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '\t', ',', ';', '=', '"', '~'), maxLength: 20 }),
      fc.string({ unit: anyByte, maxLength: 8 }),
    );
    const eol = mostly(fc.constant('\r\n'), fc.constantFrom('\n', '\r', ' \r\n', '\r\n '));
    const request = fc
      .record({
        method: mostly(fc.constantFrom('GET', 'HEAD'), fc.constantFrom('POST', 'get', 'OPTIONS', 'CONNECT', 'GET\t', 'GE')),
        target: mostly(
          fc.string({ unit: fc.constantFrom(...'/abc019-._~!$&()*+,;=:@?%'), maxLength: 30 }).map((t) => `/${t}`),
          fc.oneof(fc.string({ unit: anyByte, minLength: 1, maxLength: 10 }), fc.constantFrom('*', 'http://a/b', '/a b', '/#x', '')),
        ),
        version: mostly(fc.constant('HTTP/1.1'), fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'http/1.1', 'HTTP/1.1 ', 'HTTP/1.')),
        firstEol: eol,
        headers: fc.array(
          fc.oneof(
            { arbitrary: fc.tuple(name, mostly(fc.constantFrom(':', ': '), fc.constantFrom(' :', '\t:', '')), value, eol), weight: 6 },
            // The Connection header, mostly as a browser or undici sends it.
            {
              arbitrary: fc.tuple(
                fc.constantFrom('Connection', 'connection', 'CONNECTION'),
                fc.constantFrom(':', ': ', ':\t', ':  '),
                mostly(
                  fc.constantFrom('keep-alive', 'Keep-Alive'),
                  fc.constantFrom('close', 'upgrade', 'keep-alive, upgrade', 'keep-alive ', 'keep-alive,', 'keep-alive\t', 'x', ''),
                ),
                eol,
              ),
              weight: 1,
            },
          ),
          { maxLength: 6 },
        ),
        lastEol: eol,
        after: fc.constantFrom('', 'GET / HTTP/1.1\r\n\r\n', 'x', '0\r\n\r\n'),
      })
      .map(
        (r) =>
          `${r.method} ${r.target} ${r.version}${r.firstEol}${r.headers.map(([n, c, v, e]) => `${n}${c}${v}${e}`).join('')}${r.lastEol}${r.after}`,
      );
    let taken = 0;
    fc.assert(
      fc.property(request, (text) => {
        if (agreesOnRequest(Buffer.from(text, 'latin1'))) taken++;
      }),
      { numRuns: 4000 },
    );
    // The property is not empty: a share of the generated requests is plain enough for the fast path.
    expect(taken).toBeGreaterThan(400);
  });

  it("reads an answer's head and stated length where llhttp completes it; any other answer is llhttp's", () => {
    const body = '{"state":"WAITING","position":3}';
    const ok = `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\n\r\n${body}`;
    expect(agreesOnAnswer(Buffer.from(ok), false)).toBe(true);
    expect(agreesOnAnswer(Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), true)).toBe(true);
    expect(scannedLength).toBe(0);
    for (const text of [
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n',
      'HTTP/1.1 100 Continue\r\n\r\n',
      'HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n',
      'HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na',
      'HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\na',
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n',
      'HTTP/1.1 200 OK\nContent-Length: 0\n\n',
    ])
      expect(scanResponseHead(Buffer.from(text), 0, text.length, false), text).toBe(-1);
    // Mostly an answer whose Content-Length is its body's (so that many are plain enough for the fast path), sometimes
    // anything.
    const mostly = <T>(plain: fc.Arbitrary<T>, odd: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: plain, weight: 8 }, { arbitrary: odd, weight: 1 });
    const answer = fc
      .record({
        status: mostly(fc.constantFrom('200', '404', '503'), fc.constantFrom('101', '204', '304', '2x0', '600', '199')),
        reason: fc.constantFrom(' OK', ' ', '', ' Not Found'),
        headers: fc.array(
          fc.tuple(
            mostly(fc.constantFrom('X-A', 'Content-Type', 'vary'), fc.constantFrom('Transfer-Encoding', 'Content Length', 'Connection')),
            mostly(fc.constantFrom(': ', ':'), fc.constantFrom(' : ', '')),
            fc.constantFrom('chunked', 'a', 'close', '', 'application/json'),
            mostly(fc.constant('\r\n'), fc.constant('\n')),
          ),
          { maxLength: 3 },
        ),
        length: mostly(
          fc.constantFrom('right', 'right ows'),
          fc.constantFrom('none', 'short', 'long', 'twice', 'list', 'negative', 'hex', 'lowercase name'),
        ),
        at: fc.nat({ max: 3 }),
        body: fc.string({ maxLength: 45 }),
        toHead: fc.boolean(),
      })
      .map((a) => {
        const n = Buffer.byteLength(a.body, 'latin1');
        const cl: Record<string, string[]> = {
          right: [`Content-Length: ${n}`],
          'right ows': [`Content-Length:  ${n} `],
          none: [],
          short: [`Content-Length: ${Math.max(0, n - 1)}`],
          long: [`Content-Length: ${n + 1}`],
          twice: [`Content-Length: ${n}`, `Content-Length: ${n}`],
          list: [`Content-Length: ${n}, ${n}`],
          negative: ['Content-Length: -1'],
          hex: ['Content-Length: 0x1'],
          'lowercase name': [`content-length: ${n}`],
        };
        const lines = a.headers.map(([name, c, v, e]) => `${name}${c}${v}${e}`);
        lines.splice(Math.min(a.at, lines.length), 0, ...cl[a.length]!.map((l) => `${l}\r\n`));
        return { text: `HTTP/1.1 ${a.status}${a.reason}\r\n${lines.join('')}\r\n${a.body}`, toHead: a.toHead };
      });
    let taken = 0;
    fc.assert(
      fc.property(answer, ({ text, toHead }) => {
        const bytes = Buffer.from(text, 'latin1');
        const head = scanResponseHead(bytes, 0, bytes.length, toHead);
        // Only an answer whose stated body is all there can be checked whole.
        if (head >= 0 && head + scannedLength <= bytes.length && agreesOnAnswer(bytes, toHead)) taken++;
      }),
      { numRuns: 3000 },
    );
    expect(taken).toBeGreaterThan(300);
  });
});
