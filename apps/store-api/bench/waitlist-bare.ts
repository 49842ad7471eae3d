import Fastify from 'fastify';

// The physical limit of the join route: a bare Fastify PUT on this machine with the same path shape, the same
// request body and a response of the same shape and size as the store API's entry, but no auth, no validation
// and no database.
const app = Fastify({ logger: false });
app.put<{ Params: { id: string }; Body: { criteria?: Record<string, unknown> } }>('/listings/:id/waitlist', async (req, reply) => {
  const c = req.body?.criteria ?? {};
  const now = Date.now();
  return reply.status(201).send({
    listingId: req.params.id,
    listingName: 'Bench listing',
    entryId: 1_234_567,
    criteria: {
      dateFrom: c.dateFrom ?? null,
      dateTo: c.dateTo ?? null,
      maxPriceCents: c.maxPriceCents ?? null,
      quantity: c.quantity ?? 1,
      sections: c.sections ?? null,
      priceLevels: c.priceLevels ?? null,
    },
    joinedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 28 * 86_400_000).toISOString(),
  });
});
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`READY ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
