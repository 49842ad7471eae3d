import { connect, type Socket } from 'node:net';

/**
 * A minimal keep-alive HTTP/1.1 client for a load generator, on node:net: `connections` sockets, one request in
 * flight on each (never pipelined, as a browser), each request's bytes built by the caller before the clock starts.
 * Of an answer it reads the status line, Content-Length, Transfer-Encoding: chunked and Connection: close, and keeps
 * the body only when the status is not 200 (for the error's code); there is no object per request beyond the
 * caller's buffer. It exists because the bench shares two cores with what it measures: undici's request object,
 * header checks, body stream and JSON parse per answer cost the product's CPU.
 *
 * A connection the server closes is opened again for the next request; a request in flight when it closes (or
 * stuck past `timeoutMs`) is answered with status 0 and the code `closed` (`timeout`), as undici's error was counted.
 */
/**
 * Called once a request's answer: `status` 0 when there was none; `code` the body's `error` field for a status
 * other than 200 (empty when none), or `closed`, `timeout` or the socket's errno when there was no answer.
 */
export type OnAnswer = (status: number, code: string, ms: number) => void;

const CRLF2 = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = Buffer.from('content-length');
const TRANSFER_ENCODING = Buffer.from('transfer-encoding');
const CONNECTION = Buffer.from('connection');

// Parser states
const HEAD = 0;
const BODY_LENGTH = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_DATA_END = 4;
const TRAILERS = 5;
const BODY_TO_CLOSE = 6;

/** Whether `buf[from, to)` equals `lower` ignoring ASCII case (`lower` lower-case). */
function nameIs(buf: Buffer, from: number, to: number, lower: Buffer): boolean {
  if (to - from !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) if ((buf[from + i]! | 0x20) !== lower[i]) return false;
  return true;
}

/** Whether `buf[from, to)` contains `word` (lower-case, letters only) ignoring ASCII case. */
function containsWord(buf: Buffer, from: number, to: number, word: string): boolean {
  outer: for (let i = from; i + word.length <= to; i++) {
    for (let j = 0; j < word.length; j++) if ((buf[i + j]! | 0x20) !== word.charCodeAt(j)) continue outer;
    return true;
  }
  return false;
}

/** The `error` field of a JSON body, or empty. */
function errorCode(body: Buffer | null): string {
  if (!body || body.length === 0) return '';
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown } | null;
    return typeof parsed?.error === 'string' ? parsed.error : '';
  } catch {
    return '';
  }
}

class Connection {
  socket: Socket | null = null;
  connected = false;
  /** performance.now() when the request in flight was written; -1 when idle. */
  started = -1;
  onAnswer: OnAnswer | null = null;
  private lastError: string | null = null;
  private pending: Buffer | null = null;
  private state = HEAD;
  private status = 0;
  private remaining = 0;
  private closeAfter = false;
  private body: Buffer[] | null = null;
  private queued: Buffer | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** Writes `request` (opening the socket first if it is closed); `onAnswer` is called once with its answer. */
  send(request: Buffer, onAnswer: OnAnswer) {
    this.onAnswer = onAnswer;
    this.state = HEAD;
    this.pending = null;
    this.body = null;
    this.started = performance.now();
    if (this.socket && this.connected) this.socket.write(request);
    else {
      this.queued = request;
      if (!this.socket) this.open();
    }
  }

  private open() {
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    this.socket = socket;
    this.connected = false;
    this.lastError = null;
    socket.on('connect', () => {
      this.connected = true;
      const q = this.queued;
      this.queued = null;
      if (q) socket.write(q);
    });
    socket.on('data', (chunk: Buffer) => this.data(chunk));
    socket.on('error', (e: Error & { code?: string }) => {
      this.lastError = e.code ?? 'error'; // 'close' follows
    });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.connected = false;
      if (this.started < 0) return;
      // A body read to the connection's end is complete now; anything else in flight had no (whole) answer.
      if (this.state === BODY_TO_CLOSE) this.finish();
      else this.fail(this.lastError ?? 'closed');
    });
  }

  /** Ends the request in flight with no answer (`code`) and drops the socket; the next request opens another. */
  fail(code: string) {
    const socket = this.socket;
    this.socket = null;
    this.connected = false;
    this.queued = null;
    socket?.destroy();
    this.answer(0, code);
  }

  destroy() {
    this.started = -1;
    this.onAnswer = null;
    const socket = this.socket;
    this.socket = null;
    socket?.destroy();
  }

  private answer(status: number, code: string) {
    const ms = performance.now() - this.started;
    const cb = this.onAnswer;
    this.started = -1;
    this.onAnswer = null;
    this.pending = null;
    this.body = null;
    cb?.(status, code, ms);
  }

  private finish() {
    const status = this.status;
    const code = status === 200 ? '' : errorCode(this.body ? Buffer.concat(this.body) : null);
    if (this.closeAfter) {
      const socket = this.socket;
      this.socket = null;
      this.connected = false;
      socket?.destroy();
    }
    this.answer(status, code);
  }

  private keep(buf: Buffer, from: number, to: number) {
    if (this.body && to > from) this.body.push(Buffer.from(buf.subarray(from, to)));
  }

  private data(chunk: Buffer) {
    if (this.started < 0) {
      // Bytes with no request in flight: the server is not speaking HTTP/1.1 as asked; start afresh.
      const socket = this.socket;
      this.socket = null;
      this.connected = false;
      socket?.destroy();
      return;
    }
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let pos = 0;
    while (this.started >= 0) {
      if (this.state === HEAD) {
        const end = buf.indexOf(CRLF2, pos);
        if (end < 0) break;
        if (!this.head(buf, pos, end)) return;
        pos = end + 4;
        if (this.status >= 100 && this.status < 200) continue; // an interim answer: the real one follows
        if ((this.state as number) === BODY_LENGTH && this.remaining === 0) return this.finish(); // head() set it
      } else if (this.state === BODY_LENGTH) {
        const n = Math.min(this.remaining, buf.length - pos);
        this.keep(buf, pos, pos + n);
        pos += n;
        this.remaining -= n;
        if (this.remaining > 0) break;
        return this.finish();
      } else if (this.state === CHUNK_SIZE || this.state === TRAILERS) {
        const eol = buf.indexOf(10, pos); // \n
        if (eol < 0) break;
        const start = pos;
        const lineEnd = eol > pos && buf[eol - 1] === 13 ? eol - 1 : eol;
        if (this.state === TRAILERS) {
          pos = eol + 1;
          if (lineEnd === start) return this.finish(); // the empty line after the trailers
          continue;
        }
        let size = 0;
        let i = start;
        for (; i < lineEnd; i++) {
          const c = buf[i]!;
          const d = c >= 48 && c <= 57 ? c - 48 : (c | 0x20) >= 97 && (c | 0x20) <= 102 ? (c | 0x20) - 87 : -1;
          if (d < 0) break; // a chunk extension (;...) or whitespace
          size = size * 16 + d;
        }
        if (i === start) return this.fail('bad_chunk');
        pos = eol + 1;
        if (size === 0) this.state = TRAILERS;
        else {
          this.state = CHUNK_DATA;
          this.remaining = size;
        }
      } else if (this.state === CHUNK_DATA) {
        const n = Math.min(this.remaining, buf.length - pos);
        this.keep(buf, pos, pos + n);
        pos += n;
        this.remaining -= n;
        if (this.remaining > 0) break;
        this.state = CHUNK_DATA_END;
      } else if (this.state === CHUNK_DATA_END) {
        if (buf.length - pos < 2) break;
        pos += 2; // \r\n
        this.state = CHUNK_SIZE;
      } else {
        // BODY_TO_CLOSE: everything to the connection's end
        this.keep(buf, pos, buf.length);
        pos = buf.length;
        break;
      }
    }
    // Only an answer not yet whole gets here (a whole one returned): keep its unread bytes for the next chunk.
    if (this.started >= 0 && pos < buf.length) this.pending = Buffer.from(buf.subarray(pos));
  }

  /** Reads an answer's head in `buf[from, end)`; false (the request failed) when it is not an HTTP/1.x status line. */
  private head(buf: Buffer, from: number, end: number): boolean {
    // "HTTP/1.1 200 OK"
    if (end - from < 12 || buf[from] !== 72 /* H */ || buf[from + 8] !== 32) {
      this.fail('bad_status_line');
      return false;
    }
    this.status = (buf[from + 9]! - 48) * 100 + (buf[from + 10]! - 48) * 10 + (buf[from + 11]! - 48);
    const http10 = buf[from + 7] === 48; // HTTP/1.0
    let length = -1;
    let chunked = false;
    let close = http10;
    let line = buf.indexOf(10, from) + 1;
    while (line > 0 && line < end) {
      let eol = buf.indexOf(10, line);
      if (eol < 0 || eol > end) eol = end;
      const lineEnd = buf[eol - 1] === 13 ? eol - 1 : eol;
      const colon = buf.indexOf(58, line); // :
      if (colon > 0 && colon < lineEnd) {
        let v = colon + 1;
        while (v < lineEnd && (buf[v] === 32 || buf[v] === 9)) v++;
        if (nameIs(buf, line, colon, CONTENT_LENGTH)) {
          length = 0;
          for (let i = v; i < lineEnd && buf[i]! >= 48 && buf[i]! <= 57; i++) length = length * 10 + buf[i]! - 48;
        } else if (nameIs(buf, line, colon, TRANSFER_ENCODING)) chunked = containsWord(buf, v, lineEnd, 'chunked');
        else if (nameIs(buf, line, colon, CONNECTION)) {
          if (containsWord(buf, v, lineEnd, 'close')) close = true;
          else if (containsWord(buf, v, lineEnd, 'keep-alive')) close = false;
        }
      }
      line = eol + 1;
    }
    this.closeAfter = close;
    this.body = this.status === 200 ? null : [];
    if (this.status < 200 || this.status === 204 || this.status === 304) {
      this.state = this.status < 200 ? HEAD : BODY_LENGTH;
      this.remaining = 0;
    } else if (chunked) this.state = CHUNK_SIZE;
    else if (length >= 0) {
      this.state = BODY_LENGTH;
      this.remaining = length;
    } else {
      this.state = BODY_TO_CLOSE;
      this.closeAfter = true;
    }
    return true;
  }
}

/** The bytes of a request: `method path HTTP/1.1`, Host, `headers`, Content-Length 0 (no body). */
export function requestBytes(method: string, path: string, host: string, headers: Record<string, string>): Buffer {
  let s = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const k in headers) s += `${k}: ${headers[k]}\r\n`;
  return Buffer.from(`${s}content-length: 0\r\n\r\n`, 'latin1');
}

export function createRawClient(baseUrl: string, connections: number, { timeoutMs = 30_000 } = {}) {
  const url = new URL(baseUrl);
  const conns = Array.from({ length: connections }, () => new Connection(url.hostname, Number(url.port || 80)));
  // One timer for every connection's request in flight, not one a request: a request stuck past timeoutMs is
  // answered `timeout` and its connection dropped (the next request opens another).
  let limit = timeoutMs;
  const watch = setInterval(
    () => {
      const now = performance.now();
      for (const c of conns) if (c.started >= 0 && now - c.started > limit) c.fail('timeout');
    },
    Math.max(5, Math.min(1000, timeoutMs / 4)),
  );
  watch.unref();
  return {
    /** The longest a request may wait for its answer, in ms (checked at the interval `timeoutMs` set). */
    get timeoutMs() {
      return limit;
    },
    set timeoutMs(ms: number) {
      limit = ms;
    },
    /** The Host header's value for `requestBytes`. */
    host: url.host,
    /** One request on connection `c` (idle), for what is not measured (opening the connections, a warm-up). */
    request(request: Buffer, c = 0): Promise<{ status: number; code: string; ms: number }> {
      return new Promise((resolve) => conns[c % connections]!.send(request, (status, code, ms) => resolve({ status, code, ms })));
    },
    /** Opens every connection with one request each (`request(i)`), concurrently, before a measured run. */
    async connect(request: (i: number) => Buffer) {
      await Promise.all(conns.map((_, i) => this.request(request(i), i)));
    },
    /**
     * Keeps one request in flight on every connection until `durationMs` has passed or `next` has none left, and
     * resolves when the last answer is in; `answered` is called with each answer.
     */
    run(durationMs: number, next: () => Buffer | undefined, answered: OnAnswer) {
      return new Promise<{ elapsedMs: number; issued: number }>((resolve) => {
        const started = performance.now();
        const deadline = started + durationMs;
        let issued = 0;
        let busy = conns.length;
        // One callback a connection for the whole run, not one a request.
        const callbacks: OnAnswer[] = conns.map((c, i) => (status, code, ms) => {
          answered(status, code, ms);
          go(c, i);
        });
        const go = (c: Connection, i: number) => {
          const req = performance.now() < deadline ? next() : undefined;
          if (req === undefined) {
            if (--busy === 0) resolve({ elapsedMs: performance.now() - started, issued });
            return;
          }
          issued++;
          c.send(req, callbacks[i]!);
        };
        conns.forEach(go);
      });
    },
    close() {
      clearInterval(watch);
      for (const c of conns) c.destroy();
    },
  };
}
