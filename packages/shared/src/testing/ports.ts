import { createServer } from 'node:net';

/** A port nobody listens on now, for a server a test starts in a process of its own (STORE_API_PORT, BFF_PORT). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
