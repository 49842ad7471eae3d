// The local edge's framing guard: a TCP front for `workerd serve` that checks each request's framing with Node's own
// HTTP parser (llhttp, strict) and passes the bytes on unchanged. workerd's HTTP layer answers a request it cannot
// frame (two Content-Length headers, a Transfer-Encoding other than chunked, an absolute-form target) with a bare
// `500 Internal Server Error` before any worker code runs, and no setting of workerd changes that; the guard answers
// `400 BAD_REQUEST` in the error shape instead and closes the connection. Run as its own process (the launcher in
// local.ts starts it), so its CPU is the edge's, not the store API's.
import { rmdirSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import net from 'node:net';
import { scannedBodyLength, scannedLength, scannedMethod, scanRequest, scanResponseHead } from './framing-scan.js';

/** Node's HTTP parser binding (llhttp), the one its HTTP server frames requests with. */
export interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | (Error & { code?: string; reason?: string });
  finish(): unknown;
  close(): void;
  [callback: number]: (...args: unknown[]) => unknown;
}
export interface ParserClass {
  new (): Parser;
  REQUEST: number;
  RESPONSE: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
  kOnExecute: number;
  kLenientNone: number;
  kLenientAll: number;
}

/** Method names by llhttp's method number, as Node's HTTP server reads them. */
export const METHODS = (createRequire(import.meta.url)('_http_common') as { methods?: string[] }).methods ?? [];

export function loadParser(): ParserClass {
  const { HTTPParser } = createRequire(import.meta.url)('_http_common') as { HTTPParser?: ParserClass };
  if (typeof HTTPParser !== 'function' || typeof HTTPParser.REQUEST !== 'number')
    throw new Error(`this Node.js (${process.version}) does not expose its HTTP parser; run the edge with EDGE_FRAMING_GUARD=off`);
  return HTTPParser;
}

/** The guard's answer to a request it will not pass on: the error shape, then the connection closed. */
export function badRequest(message: string): Buffer {
  const body = JSON.stringify({ error: 'BAD_REQUEST', message });
  return Buffer.from(
    `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `cache-control: no-store\r\nx-onsale-edge: hit\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** What a fan is told when workerd itself cannot be reached: 503 with Retry-After, never a closed socket. */
const EDGE_DOWN = (() => {
  const body = JSON.stringify({
    error: 'EDGE_FAULT',
    message: 'the waiting room could not answer just now; try again shortly',
    retryAfterSeconds: 5,
  });
  return Buffer.from(
    `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `retry-after: 5\r\ncache-control: no-store\r\nx-onsale-edge: hit\r\nconnection: close\r\n\r\n${body}`,
  );
})();

/** Why llhttp refused a request, in words a client's developer can act on. */
function reasonOf(e: Error & { code?: string; reason?: string }): string {
  switch (e.code) {
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return 'the request has more than one Content-Length header, or one beside Transfer-Encoding';
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'the request has a Transfer-Encoding other than chunked (or chunked not last)';
    case 'HPE_INVALID_CONTENT_LENGTH':
      return 'the request has an invalid Content-Length header';
    case 'HPE_HEADER_OVERFLOW':
      return 'the request headers are too large';
    default:
      return `the request is not valid HTTP/1.1 (${e.reason ?? e.code ?? 'unreadable'})`;
  }
}

/**
 * A connection's requests, read to judge their framing: by the fast path (framing-scan.ts) while they are the plain
 * ones it knows (a POST's body skipped by its stated length, across reads), then, from the first that is not, by
 * llhttp for the rest of the connection: each starts at a message boundary (never inside a body), where llhttp is in
 * the state it starts in. Each request's method is pushed on `unanswered` once its head is read.
 */
export class RequestReader {
  /** Why the connection's requests are refused, once they are. */
  refused: string | null = null;
  private bodyLeft = 0;
  private parser: Parser | undefined;

  constructor(
    private readonly HTTPParser: ParserClass,
    private readonly unanswered: string[],
  ) {}

  /** Whether llhttp reads the connection's requests from now on. */
  get slow(): boolean {
    return this.parser !== undefined;
  }

  /** Reads a chunk of the client's bytes: true when every request in it may be passed on. */
  read(chunk: Buffer): boolean {
    let at = 0;
    if (this.parser === undefined) {
      for (;;) {
        if (this.bodyLeft > 0) {
          const take = Math.min(this.bodyLeft, chunk.length - at);
          this.bodyLeft -= take;
          at += take;
          if (this.bodyLeft > 0) return true;
        }
        if (at === chunk.length) return true;
        const next = scanRequest(chunk, at, chunk.length);
        if (next < 0) break;
        this.unanswered.push(scannedMethod);
        this.bodyLeft = scannedBodyLength;
        at = next;
      }
      this.parser = this.newParser();
    }
    const r = this.parser.execute(at === 0 ? chunk : chunk.subarray(at));
    if (typeof r !== 'number') {
      this.refused ??= reasonOf(r);
      return false;
    }
    return this.refused === null;
  }

  close(): void {
    this.parser?.close();
  }

  private newParser(): Parser {
    const { HTTPParser } = this;
    const p = new HTTPParser();
    const noop = () => 0;
    p.initialize(HTTPParser.REQUEST, {}, 0, HTTPParser.kLenientNone);
    p[HTTPParser.kOnHeaders] = noop;
    p[HTTPParser.kOnBody] = noop;
    p[HTTPParser.kOnMessageComplete] = noop;
    p[HTTPParser.kOnExecute] = noop;
    p[HTTPParser.kOnHeadersComplete] = (...args: unknown[]) => {
      const [, , , method, url, , , upgrade] = args as [number, number, string[], number, string, number, string, boolean];
      // origin-form only ("*" is OPTIONS' asterisk-form): an absolute-form target is for proxies, and the edge is not one.
      if (this.refused === null && !url.startsWith('/') && url !== '*')
        this.refused = 'the request target must be a path (origin-form), not an absolute URL';
      else if (this.refused === null && upgrade) this.refused = 'the edge does not upgrade connections (Upgrade or CONNECT)';
      this.unanswered.push(METHODS[method] ?? '');
      return 0;
    };
    return p;
  }
}

export interface FramingGuardOptions {
  host: string;
  port: number;
  /** workerd's own socket, on this machine: a Unix socket's path, or a loopback port. */
  target: { path: string } | { port: number; host?: string };
}

/** Bytes a socket reads at most at once into its own buffer. */
const READ_BYTES = 16 * 1024;

/**
 * The accepted connection as a socket that reads into `onread`'s buffer (net.Server has no such option: the
 * connection's handle, not yet reading (pauseOnConnect), is taken into a socket made with it). A Node without the
 * handle where it is looked for keeps the accepted socket, its reads delivered to the same callback.
 */
function ownReads(accepted: net.Socket, onread: { buffer: () => Buffer; callback: (n: number, buffer: Buffer) => boolean }): net.Socket {
  const held = accepted as unknown as { _handle?: object | null };
  const handle = held._handle;
  if (!handle) {
    accepted.setNoDelay(true);
    accepted.on('data', (d: Buffer) => onread.callback(d.length, d));
    accepted.resume();
    return accepted;
  }
  held._handle = null;
  accepted.destroy();
  const socket = new net.Socket({ handle, allowHalfOpen: true, readable: true, writable: true, onread } as net.SocketConstructorOpts);
  socket.setNoDelay(true);
  return socket;
}

/** Node's stream binding, for a write straight to a socket's handle (what net.Socket's write does underneath). */
interface StreamBinding {
  WriteWrap: new () => WriteReq;
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
}
interface WriteReq {
  handle: object;
  oncomplete: (status: number) => void;
  async: boolean;
  buffer: Buffer | null;
}
interface StreamHandle {
  writeBuffer(req: WriteReq, data: Buffer): number;
}
const streamBinding: StreamBinding | null = (() => {
  try {
    const b = (process as unknown as { binding(name: string): Partial<StreamBinding> }).binding('stream_wrap');
    return typeof b.WriteWrap === 'function' && b.streamBaseState instanceof Int32Array && typeof b.kLastWriteWasAsync === 'number'
      ? (b as StreamBinding)
      : null;
  } catch {
    return null;
  }
})();

/** What a write left behind: nothing (the kernel took the bytes), the bytes queued, or queued past the mark. */
const WRITTEN = 0;
const QUEUED = 1;
const FULL = 2;

/**
 * Writes to a socket straight to its handle while nothing is queued on it (the usual case: the kernel takes a request
 * or an answer whole at once), without the Writable stream's bookkeeping and the tick it schedules after every write;
 * else (connecting, bytes queued, a Node without the binding) through the socket as before. Both reach libuv's queue
 * for the socket in the order they are made, so the bytes go out in order. A write the kernel did not take whole
 * keeps its buffer and answers FULL: the caller stops reading the other side until `drained`.
 */
function writerOf(socket: net.Socket, drained: () => void) {
  let held = 0;
  const complete = (status: number) => {
    held--;
    if (status < 0) socket.destroy(new Error(`write failed (${status})`));
    else if (held === 0) drained();
  };
  return (data: Buffer): number => {
    const handle = (socket as unknown as { _handle?: StreamHandle | null })._handle;
    if (streamBinding && handle && held === 0 && !socket.connecting && socket.writable && socket.writableLength === 0) {
      const req = new streamBinding.WriteWrap();
      req.handle = handle;
      req.oncomplete = complete;
      req.async = false;
      req.buffer = null;
      const err = handle.writeBuffer(req, data);
      if (err !== 0) {
        socket.destroy(new Error(`write failed (${err})`));
        return WRITTEN;
      }
      if (streamBinding.streamBaseState[streamBinding.kLastWriteWasAsync] === 0) return WRITTEN;
      req.buffer = data; // libuv writes the rest from it later
      held++;
      return FULL;
    }
    const below = socket.write(data);
    return !below ? FULL : socket.writableLength > 0 ? QUEUED : WRITTEN;
  };
}

/** Starts the guard; resolves with its server once it listens. */
export function startFramingGuard(o: FramingGuardOptions): Promise<net.Server & { destroyConnections(): void }> {
  const HTTPParser = loadParser();
  const open = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (accepted) => {
    // Both sockets read into a buffer of their own, reused from read to read (Node's `onread`), rather than a new
    // buffer and a stream 'data' event per read: about a fifth of the relay's CPU a request (docs/benchmarks.md).
    // A read's bytes written on and still queued keep that buffer: the socket reads into a new one from then on.
    let clientBuffer: Buffer | undefined;
    let upstreamBuffer: Buffer | undefined;
    const client = ownReads(accepted, {
      buffer: () => (clientBuffer ??= Buffer.allocUnsafe(READ_BYTES)),
      callback: (n: number, buffer: Buffer) => {
        if (onData(buffer.subarray(0, n)) !== WRITTEN) clientBuffer = undefined;
        return true;
      },
    });
    open.add(client);
    const upstreamRead = {
      buffer: () => (upstreamBuffer ??= Buffer.allocUnsafe(READ_BYTES)),
      callback: (n: number, buffer: Buffer) => {
        if (onAnswer(buffer.subarray(0, n)) !== WRITTEN) upstreamBuffer = undefined;
        return true;
      },
    };
    const upstream =
      'path' in o.target
        ? net.connect({ path: o.target.path, onread: upstreamRead })
        : net.connect({ host: o.target.host ?? '127.0.0.1', port: o.target.port, noDelay: true, onread: upstreamRead });
    const resumeClient = () => {
      if (requests.refused === null) client.resume();
    };
    const toUpstream = writerOf(upstream, resumeClient);
    const toClient = writerOf(client, () => upstream.resume());
    const noop = () => 0;
    // The requests passed to workerd and not yet answered whole, by method (a HEAD's answer has no body).
    const unanswered: string[] = [];
    const requests = new RequestReader(HTTPParser, unanswered);
    let clientDone = false;
    let answeredAnything = false;

    // workerd's answers, read only to know when each request has been answered whole: by the fast path while they
    // state their length, then by llhttp for the rest of the connection.
    let responses: Parser | undefined;
    let bodyLeft = 0;
    let informational = false;
    let responsesReadable = true;
    const responseParser = () => {
      const p = new HTTPParser();
      p.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientAll);
      p[HTTPParser.kOnHeaders] = noop;
      p[HTTPParser.kOnBody] = noop;
      p[HTTPParser.kOnExecute] = noop;
      p[HTTPParser.kOnHeadersComplete] = (...args: unknown[]) => {
        const status = args[5] as number;
        informational = status >= 100 && status < 200;
        return unanswered[0] === 'HEAD' ? 1 : 0; // 1: no body follows
      };
      p[HTTPParser.kOnMessageComplete] = () => {
        if (!informational) unanswered.shift();
        finishIfDone();
        return 0;
      };
      return p;
    };
    /** Reads a chunk of workerd's bytes; false once they cannot be read as HTTP answers. */
    const readResponses = (d: Buffer): boolean => {
      let at = 0;
      if (responses === undefined) {
        for (;;) {
          if (bodyLeft > 0) {
            const take = Math.min(bodyLeft, d.length - at);
            bodyLeft -= take;
            at += take;
            if (bodyLeft > 0) return true;
            unanswered.shift();
            finishIfDone();
          }
          if (at === d.length) return true;
          const next = scanResponseHead(d, at, d.length, unanswered[0] === 'HEAD');
          if (next < 0) break;
          at = next;
          bodyLeft = scannedLength;
          if (bodyLeft === 0) {
            unanswered.shift();
            finishIfDone();
          }
        }
        responses = responseParser();
      }
      return typeof responses.execute(at === 0 ? d : d.subarray(at)) === 'number';
    };

    /** Once every request passed on is answered: the refusal (or the client's end) closes the connection. */
    const finishIfDone = () => {
      if (unanswered.length > 0 && responsesReadable) return;
      if (requests.refused !== null) {
        if (client.writable) client.end(badRequest(requests.refused));
        upstream.destroy();
      } else if (clientDone) {
        client.end();
        upstream.destroy();
      }
    };

    let reading = true;
    /** A read of the client's: passed on unless refused. Says what the write left behind (WRITTEN: the buffer is free). */
    function onData(chunk: Buffer): number {
      if (!reading) return WRITTEN;
      const before = unanswered.length;
      if (!requests.read(chunk)) {
        // A chunk with a refused request in it is not passed on (what precedes it in the same chunk neither: the
        // client is told why and reconnects). Those already passed are answered first.
        unanswered.length = before;
        reading = false;
        client.pause();
        finishIfDone();
        return WRITTEN;
      }
      const written = toUpstream(chunk);
      if (written === FULL) client.pause();
      return written;
    }
    upstream.on('drain', resumeClient);
    function onAnswer(d: Buffer): number {
      answeredAnything = true;
      // Passed on first: reading it may finish the connection (the refusal written after it).
      const written = client.destroyed ? WRITTEN : toClient(d);
      if (written === FULL) upstream.pause();
      if (responsesReadable && !readResponses(d)) {
        responsesReadable = false;
        finishIfDone();
      }
      return written;
    }
    client.on('drain', () => upstream.resume());
    // A client done sending (a half-close) still gets its answers: workerd, told of the end, would drop them.
    client.on('end', () => {
      clientDone = true;
      finishIfDone();
    });
    upstream.on('end', () => {
      if (requests.refused !== null && client.writable) client.end(badRequest(requests.refused));
      else client.end();
    });
    upstream.on('error', (e: NodeJS.ErrnoException) => {
      if (!answeredAnything && client.writable) client.end(requests.refused !== null ? badRequest(requests.refused) : EDGE_DOWN);
      else client.destroy();
      if (e.code !== 'ECONNRESET' && e.code !== 'EPIPE') console.error(`onsale edge: framing guard: workerd: ${e.message}`);
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => {
      open.delete(client);
      upstream.destroy();
      requests.close();
      responses?.close();
    });
  });
  const guard = Object.assign(server, {
    destroyConnections: () => {
      for (const s of open) s.destroy();
    },
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.removeListener('error', reject);
      resolve(guard);
    });
  });
}

// Run as a process: `framing-guard.ts <host> <port> <workerd's Unix socket path or port> [<workerd pid>]`; prints
// {"event":"listen","port":N} when ready.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [host, port, target, workerdPid] = process.argv.slice(2);
  startFramingGuard({ host: host!, port: Number(port), target: /^\d+$/.test(target!) ? { port: Number(target) } : { path: target! } }).then(
    (server) => {
      process.stdout.write(`${JSON.stringify({ event: 'listen', port: (server.address() as net.AddressInfo).port })}\n`);
      const stop = () => {
        server.close(() => process.exit(0));
        server.destroyConnections();
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      // The launcher gone (its end of stdin closed with it, even by kill -9): the guard goes too, and takes the
      // workerd it fronts along, which watches nothing of its own.
      process.stdin.resume();
      process.stdin.on('end', () => {
        if (workerdPid) {
          try {
            process.kill(Number(workerdPid), 'SIGTERM');
          } catch {
            // already gone
          }
        }
        // workerd's Unix socket and the directory the launcher made for it (nothing else is in it) go too.
        if (!/^\d+$/.test(target!)) {
          try {
            unlinkSync(target!);
            rmdirSync(dirname(target!));
          } catch {
            // already gone
          }
        }
        process.exit(0);
      });
    },
    (e: Error & { code?: string }) => {
      process.stderr.write(
        `onsale edge: framing guard could not listen: ${e.code === 'EADDRINUSE' ? 'address already in use' : e.message}\n`,
      );
      process.exit(1);
    },
  );
}
