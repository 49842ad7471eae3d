import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TEST_CARDS, orderConfirmationSchema } from '@onsale/shared/checkout';
import { errorSchema, holdSchema } from '../src/routes/schemas.js';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The hold's and the checkout's answers are written by a serializer compiled from their zod schemas' JSON Schema
// (compiled-serializer.ts), not a zod encode per answer: the text on the wire is what the zod serializer wrote, field
// for field and in the same order, and nothing outside the schema leaves.
let h: TestApp;
beforeAll(async () => {
  h = await setupApp();
});
afterAll(() => h.close());

/** What fastify-type-provider-zod's serializer writes for `data` under `schema`. */
const zodText = (schema: z.ZodType, data: unknown) => JSON.stringify(z.encode(schema, data));

describe("the hold's and the checkout's answers", () => {
  it("are the zod serializer's text, for a hold, a refusal and a paid checkout", async () => {
    const { eventId } = await makeEvent(h.t);
    const token = await login(h.app, 'answers-1');
    const headers = await admitted(token, eventId);
    const held = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...headers, 'idempotency-key': 'answers-hold-1' },
      payload: { section: 'A', quantity: 2 },
    });
    expect(held.statusCode).toBe(201);
    const hold = held.json<{ holdId: string; seats: unknown[] }>();
    expect(hold.seats).toHaveLength(2);
    expect(held.payload).toBe(zodText(holdSchema.extend({ admissionToken: z.string() }), hold));

    // A refusal with details beyond the error schema's own fields (passthrough): kept, as zod kept them.
    const refused = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...headers, 'idempotency-key': 'answers-hold-2' },
      payload: { section: 'NOPE', quantity: 2 },
    });
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect(refused.payload).toBe(zodText(errorSchema, refused.json()));

    const paid = await h.app.inject({
      method: 'POST',
      url: `/holds/${hold.holdId}/checkout`,
      headers: { ...headers, 'idempotency-key': 'answers-pay-1' },
      payload: { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
    });
    expect(paid.statusCode).toBe(200);
    expect(paid.payload).toBe(zodText(orderConfirmationSchema, paid.json()));
    expect(Object.keys(paid.json())).toEqual(['orderId', 'holdId', 'status', 'amountCents', 'seatCount']);
  });
});
