import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { MAX_PLACE_MOVES } from '@onsale/shared/queue';
import { bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

// A fan's place follows the fan to another device (issue 31, item 11): a join from another device of the same
// account takes the place there (the same join index, one row), and the earlier device's queue token stops
// (409 POSITION_MOVED), within the one-place rule; against real PostgreSQL, with concurrent joins from several devices.

let h: TestApp;
let eventId: string;

beforeAll(async () => {
  h = await setupApp();
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
});
afterAll(() => h.close());

const join = (token: string, device: string) =>
  h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers: { ...bearer(token), 'x-device-id': device } });
const status = (token: string, queueToken: string, device: string) =>
  h.app.inject({
    url: `/events/${eventId}/queue/status`,
    headers: { ...bearer(token), 'x-device-id': device, 'x-queue-token': queueToken },
  });
const claims = (t: string) => JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString()) as { joinIndex: number; moves?: number };
const entries = async (accountId: string) =>
  (
    await sql<{ join_index: number; device_moves: number }>`
      SELECT join_index, device_moves FROM queue_entries WHERE event_id = ${eventId} AND account_id = ${accountId}`.execute(h.t.db)
  ).rows;

describe('a place in line on another device', () => {
  it('moves with the fan who signs in there: same place, one row; the old device is told the place moved, and can bring it back', async () => {
    const fan = await login(h.app, 'mover');
    const phone = await join(fan, 'the-fans-phone');
    expect(phone.statusCode).toBe(200);
    const laptop = await join(fan, 'the-fans-laptop');
    expect(laptop.statusCode, laptop.body).toBe(200);
    expect(laptop.json().position).toBe(phone.json().position);
    expect(claims(laptop.json().queueToken).joinIndex).toBe(claims(phone.json().queueToken).joinIndex);
    expect(claims(laptop.json().queueToken).moves).toBe(1);
    expect(await entries('mover')).toEqual([{ join_index: claims(phone.json().queueToken).joinIndex, device_moves: 1 }]);

    const old = await status(fan, phone.json().queueToken, 'the-fans-phone');
    expect(old.statusCode).toBe(409);
    expect(old.json()).toMatchObject({ error: 'POSITION_MOVED', field: 'x-queue-token' });
    const now = await status(fan, laptop.json().queueToken, 'the-fans-laptop');
    expect(now.statusCode, now.body).toBe(200);
    expect(now.json().position).toBe(phone.json().position);
    // A join again from the laptop is the same place with the same moves (a reload does not move it).
    expect(claims((await join(fan, 'the-fans-laptop')).json().queueToken).moves).toBe(1);

    // Back to the phone: the laptop's token stops in turn.
    const back = await join(fan, 'the-fans-phone');
    expect(back.statusCode).toBe(200);
    expect(back.json().position).toBe(phone.json().position);
    expect((await status(fan, laptop.json().queueToken, 'the-fans-laptop')).json().error).toBe('POSITION_MOVED');
    expect((await status(fan, back.json().queueToken, 'the-fans-phone')).statusCode).toBe(200);
  });

  it('taken by several devices at once: one row, one place, and only the last device to take it can poll', async () => {
    const fan = await login(h.app, 'many-devices');
    const first = await join(fan, 'device-zero-0000');
    expect(first.statusCode).toBe(200);
    const devices = ['device-one-00001', 'device-two-00002', 'device-three-003', 'device-four-0004'];
    const joins = await Promise.all(devices.map((d) => join(fan, d)));
    for (const r of joins) expect(r.statusCode, r.body).toBe(200);
    expect(new Set(joins.map((r) => r.json().position))).toEqual(new Set([first.json().position]));
    const rows = await entries('many-devices');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.device_moves).toBe(devices.length);
    // Each device's token carries the moves it was issued at: exactly one (the last mover) still holds the place.
    const polls = await Promise.all(devices.map((d, i) => status(fan, joins[i]!.json().queueToken, d)));
    expect(polls.filter((p) => p.statusCode === 200)).toHaveLength(1);
    expect(polls.filter((p) => p.statusCode === 409 && p.json().error === 'POSITION_MOVED')).toHaveLength(devices.length - 1);
    expect((await status(fan, first.json().queueToken, 'device-zero-0000')).json().error).toBe('POSITION_MOVED');
  });

  it(`moves at most ${MAX_PLACE_MOVES} times: then 409 PLACE_MOVE_LIMIT, and the place stays where it is`, async () => {
    const fan = await login(h.app, 'hopper');
    let last = await join(fan, 'hop-device-00');
    for (let i = 1; i <= MAX_PLACE_MOVES; i++) {
      last = await join(fan, `hop-device-0${i}`);
      expect(last.statusCode, last.body).toBe(200);
    }
    const refused = await join(fan, 'hop-device-99');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'PLACE_MOVE_LIMIT', field: 'x-device-id' });
    expect((await entries('hopper'))[0]!.device_moves).toBe(MAX_PLACE_MOVES);
    expect((await status(fan, last.json().queueToken, `hop-device-0${MAX_PLACE_MOVES}`)).statusCode).toBe(200);
  });

  it("another account's join never takes a place: two accounts, two places", async () => {
    const a = await login(h.app, 'sharer-a');
    const b = await login(h.app, 'sharer-b');
    const ja = await join(a, 'shared-device-01');
    const jb = await join(b, 'shared-device-01');
    expect(jb.json().position).not.toBe(ja.json().position);
    expect((await status(a, ja.json().queueToken, 'shared-device-01')).statusCode).toBe(200);
  });
});
