import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadParser, METHODS, RequestReader } from '../src/framing-guard.js';
import { scannedBodyLength, scannedLength, scannedMethod, scanRequest, scanResponseHead } from '../src/framing-scan.js';

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

/**
 * The fast path's promise about a request it accepted: llhttp reads it whole, ending where the fast path says (the
 * head, then the body's stated length).
 */
function agreesOnRequest(bytes: Buffer): boolean {
  const head = scanRequest(bytes, 0, bytes.length);
  if (head < 0) return false;
  const method = scannedMethod;
  const end = head + scannedBodyLength;
  // Only a request whose stated body is all there can be checked whole.
  if (end > bytes.length) return false;
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
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\n\r\n',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: +2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: -2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 0x2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 2a\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 2\t\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 2 2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length: 12345678\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent Length: 2\r\n\r\nab',
  'POST /events/x/queue HTTP/1.1\r\nHost: a\r\nContent-Length : 2\r\n\r\nab',
  'POST http://evil.example/events/x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nab',
  'HEAD /events/ok HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nab',
  'PUT /events/ok HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nab',
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

  it('takes a POST with one plain Content-Length (a join as undici sends it), its body skipped by that length', () => {
    const body = JSON.stringify({ deviceId: 'edge-bench-device-123', fanId: 'f'.repeat(24), captcha: 'c'.repeat(64) });
    const join =
      `POST /events/5b0e8e2c-3c4e-4d7e-9d55-1f7b1c2a9e01/queue/join HTTP/1.1\r\nhost: 127.0.0.1:8787\r\nconnection: keep-alive\r\n` +
      `content-type: application/json\r\nauthorization: Bearer ${'a'.repeat(180)}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    expect(agreesOnRequest(Buffer.from(join))).toBe(true);
    expect(scannedMethod).toBe('POST');
    expect(scannedBodyLength).toBe(Buffer.byteLength(body));
    // White space around the digits as RFC 9112 allows, leading zeros, an empty body, the longest value taken.
    for (const [value, n] of [
      [' \t5  ', 5],
      ['0005', 5],
      ['0', 0],
      ['\t0', 0],
    ] as const) {
      const text = `POST /a HTTP/1.1\r\nHost: a\r\nContent-Length:${value}\r\n\r\n${'x'.repeat(n)}`;
      expect(agreesOnRequest(Buffer.from(text)), value).toBe(true);
      expect(scannedBodyLength).toBe(n);
    }
    const longest = Buffer.from('POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 9999999\r\n\r\n');
    expect(scanRequest(longest, 0, longest.length)).toBe(longest.length);
    expect(scannedBodyLength).toBe(9_999_999);
    // Pipelined: the next request starts right after the body, whatever the body's bytes look like.
    const two = Buffer.from(`POST /a HTTP/1.1\r\nContent-Length: 18\r\n\r\nGET / HTTP/1.1\r\n\r\n${poll('x')}`);
    const head = scanRequest(two, 0, two.length);
    expect(scanRequest(two, head + scannedBodyLength, two.length)).toBe(two.length);
    expect(scannedMethod).toBe('GET');
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
  it('any POST it takes, llhttp takes too, with the same body, ending at the same byte', () => {
    const mostly = <T>(plain: fc.Arbitrary<T>, odd: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: plain, weight: 6 }, { arbitrary: odd, weight: 1 });
    const post = fc
      .record({
        method: mostly(fc.constant('POST'), fc.constantFrom('PUT', 'post', 'POST\t', 'PATCH', 'GET', 'HEAD')),
        target: mostly(fc.constantFrom('/events/x/queue/join', '/holds', '/checkout?x=1'), fc.constantFrom('*', 'http://a/b', '/a b')),
        before: fc.array(fc.constantFrom('Host: a\r\n', 'Connection: keep-alive\r\n', 'content-type: application/json\r\n'), {
          maxLength: 3,
        }),
        name: mostly(
          fc.constantFrom('Content-Length', 'content-length', 'CONTENT-LENGTH'),
          fc.constantFrom('Content-Lengt', 'Content Length'),
        ),
        colon: mostly(fc.constantFrom(':', ': ', ':\t', ':  '), fc.constantFrom(' :', '')),
        length: mostly(
          fc.constantFrom('right', 'right ows', 'leading zeros'),
          fc.constantFrom(
            'none',
            'short',
            'long',
            'twice',
            'twice differing',
            'list',
            'plus',
            'minus',
            'hex',
            'junk',
            'empty',
            'eight digits',
            'te',
            'tab after',
          ),
        ),
        after: fc.array(fc.constantFrom('X-A: b\r\n', 'Transfer-Encoding: chunked\r\n', 'Connection: close\r\n', 'Accept: */*\r\n'), {
          maxLength: 2,
        }),
        body: fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
        next: fc.constantFrom('', 'GET / HTTP/1.1\r\n\r\n', 'POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx', 'x'),
      })
      .map((r) => {
        const n = Buffer.byteLength(r.body, 'latin1');
        const cl = `${r.name}${r.colon}`;
        const lines: Record<string, string[]> = {
          right: [`${cl}${n}`],
          'right ows': [`${cl}${n}  `],
          'tab after': [`${cl}${n}\t`],
          'leading zeros': [`${cl}00${n}`],
          none: [],
          short: [`${cl}${Math.max(0, n - 1)}`],
          long: [`${cl}${n + 1}`],
          twice: [`${cl}${n}`, `${cl}${n}`],
          'twice differing': [`${cl}${n}`, `${cl}${n + 1}`],
          list: [`${cl}${n}, ${n}`],
          plus: [`${cl}+${n}`],
          minus: [`${cl}-${n}`],
          hex: [`${cl}0x${n}`],
          junk: [`${cl}${n}x`],
          empty: [cl],
          'eight digits': [`${cl}0000000${n}`],
          te: [`${cl}${n}`, 'Transfer-Encoding: chunked'],
        };
        const head = `${r.method} ${r.target} HTTP/1.1\r\n${r.before.join('')}${lines[r.length]!.map((l) => `${l}\r\n`).join('')}${r.after.join('')}\r\n`;
        return head + r.body + r.next;
      });
    let taken = 0;
    fc.assert(
      fc.property(post, (text) => {
        if (agreesOnRequest(Buffer.from(text, 'latin1'))) taken++;
      }),
      { numRuns: 4000 },
    );
    expect(taken).toBeGreaterThan(1000);
  });

  describe("the guard's request reader, as the connection's bytes arrive in reads of any size", () => {
    /** What llhttp alone (strict, as the guard ran every byte before the fast path) makes of the whole bytes. */
    function reference(bytes: Buffer) {
      const r = llhttpRequests(bytes);
      const refused = r.error !== null || r.heads.some((h) => h.upgrade || (!h.url.startsWith('/') && h.url !== '*'));
      return { refused, methods: r.heads.map((h) => h.method) };
    }
    /** The guard's reader fed `bytes` cut at `cuts`: whether it refused, and the methods it pushed until then. */
    function read(bytes: Buffer, cuts: number[]) {
      const methods: string[] = [];
      const reader = new RequestReader(HTTPParser, methods);
      let from = 0;
      for (const to of [...cuts, bytes.length]) {
        if (!reader.read(bytes.subarray(from, to))) {
          reader.close();
          return { refused: true, methods, slow: reader.slow };
        }
        from = to;
      }
      reader.close();
      return { refused: false, methods, slow: reader.slow };
    }
    const body = JSON.stringify({ holdId: 'h'.repeat(20), seats: ['A-1', 'A-2'] });
    const postOf = (path: string, b: string) =>
      `POST ${path} HTTP/1.1\r\nhost: a\r\nconnection: keep-alive\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
    const pipelined = [
      poll('x'),
      postOf('/events/x/queue/join', body),
      // A body that looks like a request: still a body.
      postOf('/holds', 'GET /x HTTP/1.1\r\n\r\n'),
      postOf('/checkout', ''),
      'HEAD /events/x HTTP/1.1\r\nHost: a\r\n\r\n',
      postOf('/events/x/queue/join', body),
    ].join('');

    it('reads pipelined requests with bodies cut at every byte as llhttp reads them whole, all on the fast path', () => {
      const bytes = Buffer.from(pipelined);
      const whole = reference(bytes);
      expect(whole).toEqual({ refused: false, methods: ['GET', 'POST', 'POST', 'POST', 'HEAD', 'POST'] });
      // Cut once at every byte, then every byte a read of its own. A head cut in two goes to llhttp (as before); a
      // body cut anywhere stays on the fast path.
      for (let k = 0; k <= bytes.length; k++) expect(read(bytes, [k]), `cut at ${k}`).toMatchObject(whole);
      expect(
        read(
          bytes,
          Array.from({ length: bytes.length }, (_, i) => i),
        ),
      ).toMatchObject(whole);
      expect(read(bytes, []).slow).toBe(false);
      // Cut only inside bodies (and between requests): never llhttp's.
      for (let at = 0; at < bytes.length;) {
        const head = scanRequest(bytes, at, bytes.length);
        expect(head).toBeGreaterThan(at);
        const end = head + scannedBodyLength;
        for (let k = head; k <= end; k++) expect(read(bytes, [k]).slow, `cut at ${k}`).toBe(false);
        at = end;
      }
    });

    it('refuses what llhttp refuses, a malformed request after POSTs with bodies, cut at every byte', () => {
      for (const bad of MALFORMED) {
        const bytes = Buffer.from(pipelined + bad, 'latin1');
        const whole = reference(bytes);
        // Some of the list are well formed requests llhttp takes (a GET's Content-Length: 0): same outcome either way.
        for (let k = 0; k <= bytes.length; k += 7) expect(read(bytes, [k]).refused, `${bad} cut at ${k}`).toBe(whole.refused);
        expect(
          read(
            bytes,
            Array.from({ length: bytes.length }, (_, i) => i),
          ).refused,
          bad,
        ).toBe(whole.refused);
      }
    });

    it('any run of requests, cut anywhere, is refused or passed as llhttp alone would', () => {
      const part = fc.constantFrom(
        poll('x'),
        postOf('/j', body),
        postOf('/h', ''),
        'POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc',
        'POST /a HTTP/1.1\r\nContent-Length:  03 \r\n\r\nabc',
        'POST /a HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc',
        'POST /a HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        'POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
        'POST /a HTTP/1.1\r\nContent-Length: -1\r\n\r\n',
        'POST http://a/b HTTP/1.1\r\nContent-Length: 1\r\n\r\nx',
        'GET /a HTTP/1.1\r\nConnection: close\r\n\r\n',
        'GET /a HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n',
        'HEAD /a HTTP/1.1\r\n\r\n',
      );
      fc.assert(
        fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 4 }), (parts, at) => {
          const bytes = Buffer.from(parts.join(''), 'latin1');
          const cuts = [...new Set(at.map((a) => a % (bytes.length + 1)))].sort((a, b) => a - b);
          const whole = reference(bytes);
          const got = read(bytes, cuts);
          expect(got.refused).toBe(whole.refused);
          if (!whole.refused) expect(got.methods).toEqual(whole.methods);
        }),
        { numRuns: 1500 },
      );
    });
  });
});
