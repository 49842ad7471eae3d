import Fastify from 'fastify';

// The physical limit for the HTTP side: a bare Fastify route on this machine, same body size, same client.
const app = Fastify({ logger: false });
app.post('/bare', async () => ({
  holdId: '00000000-0000-0000-0000-000000000000',
  seats: [{ id: 1 }, { id: 2 }],
  expiresAt: new Date().toISOString(),
}));
app.get('/bare-status', async (_req, reply) => {
  reply.header('retry-after', '20');
  return { state: 'WAITING', position: 1234, admittedThrough: 1000, estWaitSeconds: 20 };
});
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`READY ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
