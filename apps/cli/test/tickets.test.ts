import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { TicketService } from '@onsale/shared/tickets';
import { onsale } from './run.js';

let t: TestDatabase;
let eventId: string;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  ({ eventId } = await createOpenEvent(t.db, { name: 'CLI tickets' }));
});
afterAll(() => t?.drop());

describe('onsale scanner:create / tickets:counts', () => {
  it('prints a scanner token for one event that the door accepts (audited); bad input exits non-zero', async () => {
    const r = await onsale(t.url, 'scanner:create', '--event', eventId, '--name', 'north gate', '--actor', 'ops@test');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { token: string; eventId: string; name: string };
    expect(out).toMatchObject({ eventId, name: 'north gate' });
    expect(out.token).toMatch(/^sc_[A-Za-z0-9_-]{43}$/);
    await expect(new TicketService({ db: t.db }).scanner(out.token)).resolves.toMatchObject({ eventId, name: 'north gate' });
    const audit = await t.db.selectFrom('audit_log').select(['actor']).where('action', '=', 'ticket.scanner_created').execute();
    expect(audit).toEqual([{ actor: 'ops@test' }]);

    expect((await onsale(t.url, 'scanner:create')).code).toBe(2);
    const unknown = await onsale(t.url, 'scanner:create', '--event', '00000000-0000-4000-8000-000000000000');
    expect([unknown.code, unknown.stderr.includes('EVENT_NOT_FOUND')]).toEqual([1, true]);
  });

  it('tickets:counts reads an event’s counts', async () => {
    const r = await onsale(t.url, 'tickets:counts', eventId);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ issued: 0, scanned: 0 });
  });
});
