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

/** Node's HTTP parser binding (llhttp), the one its HTTP server frames requests with. */
interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | (Error & { code?: string; reason?: string });
  finish(): unknown;
  close(): void;
  [callback: number]: (...args: unknown[]) => unknown;
}
interface ParserClass {
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
const METHODS = (createRequire(import.meta.url)('_http_common') as { methods?: string[] }).methods ?? [];

function loadParser(): ParserClass {
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

export interface FramingGuardOptions {
  host: string;
  port: number;
  /** workerd's own socket, on this machine: a Unix socket's path, or a loopback port. */
  target: { path: string } | { port: number; host?: string };
}

/** Starts the guard; resolves with its server once it listens. */
export function startFramingGuard(o: FramingGuardOptions): Promise<net.Server & { destroyConnections(): void }> {
  const HTTPParser = loadParser();
  const open = new Set<net.Socket>();
  const server = net.createServer({ noDelay: true, allowHalfOpen: true }, (client) => {
    open.add(client);
    const upstream =
      'path' in o.target
        ? net.connect({ path: o.target.path })
        : net.connect({ host: o.target.host ?? '127.0.0.1', port: o.target.port, noDelay: true });
    const noop = () => 0;
    // The requests passed to workerd and not yet answered whole, by method (a HEAD's answer has no body).
    const unanswered: string[] = [];
    let refused: string | null = null;
    let clientDone = false;
    let answeredAnything = false;

    const requests = new HTTPParser();
    requests.initialize(HTTPParser.REQUEST, {}, 0, HTTPParser.kLenientNone);
    requests[HTTPParser.kOnHeaders] = noop;
    requests[HTTPParser.kOnBody] = noop;
    requests[HTTPParser.kOnMessageComplete] = noop;
    requests[HTTPParser.kOnExecute] = noop;
    requests[HTTPParser.kOnHeadersComplete] = (...args: unknown[]) => {
      const [, , , method, url, , , upgrade] = args as [number, number, string[], number, string, number, string, boolean];
      // origin-form only ("*" is OPTIONS' asterisk-form): an absolute-form target is for proxies, and the edge is not one.
      if (refused === null && !url.startsWith('/') && url !== '*')
        refused = 'the request target must be a path (origin-form), not an absolute URL';
      else if (refused === null && upgrade) refused = 'the edge does not upgrade connections (Upgrade or CONNECT)';
      unanswered.push(METHODS[method] ?? '');
      return 0;
    };

    // workerd's answers, read only to know when each request has been answered whole.
    const responses = new HTTPParser();
    responses.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientAll);
    let informational = false;
    let responsesReadable = true;
    responses[HTTPParser.kOnHeaders] = noop;
    responses[HTTPParser.kOnBody] = noop;
    responses[HTTPParser.kOnExecute] = noop;
    responses[HTTPParser.kOnHeadersComplete] = (...args: unknown[]) => {
      const status = args[5] as number;
      informational = status >= 100 && status < 200;
      return unanswered[0] === 'HEAD' ? 1 : 0; // 1: no body follows
    };
    responses[HTTPParser.kOnMessageComplete] = () => {
      if (!informational) unanswered.shift();
      finishIfDone();
      return 0;
    };

    /** Once every request passed on is answered: the refusal (or the client's end) closes the connection. */
    const finishIfDone = () => {
      if (unanswered.length > 0 && responsesReadable) return;
      if (refused !== null) {
        if (client.writable) client.end(badRequest(refused));
        upstream.destroy();
      } else if (clientDone) {
        client.end();
        upstream.destroy();
      }
    };

    const onData = (chunk: Buffer) => {
      const before = unanswered.length;
      const r = requests.execute(chunk);
      if (typeof r !== 'number' || refused !== null) {
        // A chunk with a refused request in it is not passed on (what precedes it in the same chunk neither: the
        // client is told why and reconnects). Those already passed are answered first.
        refused ??= reasonOf(r as Error & { code?: string });
        unanswered.length = before;
        client.removeListener('data', onData);
        client.pause();
        return finishIfDone();
      }
      if (!upstream.write(chunk)) client.pause();
    };
    client.on('data', onData);
    upstream.on('drain', () => {
      if (refused === null) client.resume();
    });
    upstream.on('data', (d: Buffer) => {
      answeredAnything = true;
      // Passed on first: reading it may finish the connection (the refusal written after it).
      if (!client.destroyed && !client.write(d)) upstream.pause();
      if (responsesReadable && typeof responses.execute(d) !== 'number') {
        responsesReadable = false;
        finishIfDone();
      }
    });
    client.on('drain', () => upstream.resume());
    // A client done sending (a half-close) still gets its answers: workerd, told of the end, would drop them.
    client.on('end', () => {
      clientDone = true;
      finishIfDone();
    });
    upstream.on('end', () => {
      if (refused !== null && client.writable) client.end(badRequest(refused));
      else client.end();
    });
    upstream.on('error', (e: NodeJS.ErrnoException) => {
      if (!answeredAnything && client.writable) client.end(refused !== null ? badRequest(refused) : EDGE_DOWN);
      else client.destroy();
      if (e.code !== 'ECONNRESET' && e.code !== 'EPIPE') console.error(`onsale edge: framing guard: workerd: ${e.message}`);
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => {
      open.delete(client);
      upstream.destroy();
      requests.close();
      responses.close();
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
