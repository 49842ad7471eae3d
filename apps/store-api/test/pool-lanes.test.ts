import { afterEach, describe, expect, it } from 'vitest';
import { POOL_TAG_OF } from '../src/plugins/pool-lanes.js';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the store API: pool lanes and their timing', () => {
  it('names real routes, and times a hold and a seat map under their kinds in db_pool_wait_seconds', async () => {
    h = await setupApp({ poolMax: 2 });
    const routes = new Set(h.app.routeTable.map((r) => `${r.method} ${r.url}`));
    for (const route of Object.keys(POOL_TAG_OF)) expect(routes, route).toContain(route);

    const { eventId } = await makeEvent(h.t);
    const headers = await admitted(await login(h.app, 'lane-fan'), eventId);
    const hold = await h.app.inject({ method: 'POST', url: `/events/${eventId}/holds`, headers, payload: { section: 'A', quantity: 1 } });
    expect(hold.statusCode, hold.body).toBe(201);
    const map = await h.app.inject({ method: 'GET', url: `/events/${eventId}/sections/A/seats`, headers });
    expect(map.statusCode, map.body).toBe(200);
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/db_pool_wait_seconds_count\{kind="hold",lane="purchase"\} [1-9]/);
    expect(metrics.body).toMatch(/db_pool_wait_seconds_count\{kind="seatmap",lane="standard"\} [1-9]/);
  });
});
