import net from 'node:net';

/**
 * What the proxy does with connections:
 * - `pass`: forwards to the database;
 * - `refuse`: nothing listens on the port (ECONNREFUSED), as while the server is down;
 * - `reset`: accepts and resets at once (ECONNRESET);
 * - `starting`: answers the startup message with PostgreSQL's FATAL 57P03 "the database system is starting up";
 * - `hang`: accepts and never answers (a pool waits until its connection timeout).
 */
export type ProxyMode = 'pass' | 'refuse' | 'reset' | 'starting' | 'hang';

/**
 * A TCP proxy in front of a PostgreSQL server that a test can cut, so a test takes "its" database down and up
 * without touching the shared server other tests use. `cut()` ends every connection it carries (the server
 * "crashed"); `setMode()` decides what new connections meet.
 */
export class DatabaseProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private modeNow: ProxyMode = 'pass';
  /** Connections accepted, in every mode. */
  accepted = 0;
  private readonly hung = new Set<net.Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** Starts a proxy to the server of `databaseUrl` on a free port (or `port`). */
  static async start(databaseUrl: string, port = 0): Promise<DatabaseProxy> {
    const u = new URL(databaseUrl);
    const proxy = new DatabaseProxy(port, { host: u.hostname, port: Number(u.port || 5432) });
    await proxy.listen();
    return proxy;
  }

  /** `databaseUrl` through this proxy. */
  url(databaseUrl: string): string {
    const u = new URL(databaseUrl);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Connections accepted in `hang` mode that their client has not given up on yet. */
  get hanging(): number {
    return this.hung.size;
  }

  get mode(): ProxyMode {
    return this.modeNow;
  }

  /** What new connections meet from now on; `refuse` stops listening, any other mode listens again. */
  async setMode(mode: ProxyMode): Promise<void> {
    this.modeNow = mode;
    if (mode === 'refuse') await this.unlisten();
    else if (!this.server) await this.listen();
  }

  /** Ends every connection the proxy carries now (the server died under them). */
  cut(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.cut();
    await this.unlisten();
  }

  private async listen(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    (this as { port: number }).port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  private async unlisten(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    client.on('error', () => {});
    const mode = this.modeNow;
    if (mode === 'reset' || mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    if (mode === 'hang') {
      this.hung.add(client);
      client.on('close', () => this.hung.delete(client));
      // Read and drop what the client sends, so its giving up (the socket's end) is seen.
      client.resume();
      return;
    }
    if (mode === 'starting') {
      client.once('data', () => {
        client.end(startingUpError());
        this.sockets.delete(client);
      });
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/** PostgreSQL's ErrorResponse for a server still starting (what a client meets in the seconds after a crash). */
function startingUpError(): Buffer {
  const fields = [
    ['S', 'FATAL'],
    ['V', 'FATAL'],
    ['C', '57P03'],
    ['M', 'the database system is starting up'],
  ]
    .map(([k, v]) => `${k}${v}\0`)
    .join('');
  const body = Buffer.from(`${fields}\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
