import { describe, expect, it } from 'vitest';
import { actionWords, auditDetailsWords } from './audit.js';

describe('audit entries of the war room in words', () => {
  it('a scheduled control and its cancellation: what, when in the venue zone, why', () => {
    expect(actionWords('queue.control_scheduled')).toBe('Scheduled a queue control');
    const details = { scheduleId: 7, action: 'RATE', perMinute: 45, runAt: '2026-12-02T15:00:00.000Z', reason: 'second wave' };
    expect(auditDetailsWords('queue.control_scheduled', details, 'America/New_York')).toBe(
      'Set the rate to 45/min at 2 Dec 2026, 10:00 GMT-5. Reason: second wave',
    );
    expect(
      auditDetailsWords(
        'queue.schedule_cancelled',
        { scheduleId: 7, action: 'PAUSE', runAt: '2026-12-02T15:00:00.000Z', reason: 'merged', tier: 'FANCLUB' },
        'UTC',
      ),
    ).toBe('Pause admissions (presale tier FANCLUB) at 2 Dec 2026, 15:00 UTC: will not run. Reason: merged');
  });

  it('the words fans read: each state changed, before and after, no version numbers', () => {
    const details = {
      fromVersion: 3,
      version: 4,
      reason: 'doors time',
      changes: [{ language: 'en', state: 'WAITING', before: 'Wait.', after: 'Doors at 7.' }],
    };
    expect(auditDetailsWords('event.queue_copy_changed', details)).toBe(
      'Reason: doors time. waiting in line (English): “Wait.” → “Doors at 7.”',
    );
  });

  it('alert receivers: the address and what it hears, never the ids', () => {
    expect(auditDetailsWords('alerts.receiver_added', { receiverId: 'x', url: 'https://hooks.example/a', minSeverity: 'critical' })).toBe(
      'https://hooks.example/a, critical alerts only',
    );
    expect(actionWords('alerts.receiver_disabled')).toBe('Turned an alert receiver off');
    expect(auditDetailsWords('alerts.receiver_disabled', { receiverId: 'x', url: 'https://hooks.example/a' })).toBe(
      'https://hooks.example/a',
    );
  });
});

describe('amounts in audit entries', () => {
  it("are in the event's currency, never raw minor units: a price change, a resale listing, a refund", () => {
    const changed = { changes: [{ setting: 'priceLevels', from: ['A Floor 2500'], to: ['A Floor 3000', 'B Balcony 1250'] }] };
    expect(auditDetailsWords('event.updated', changed, 'Europe/London', 'GBP')).toBe(
      'prices: A Floor £25.00 → A Floor £30.00; B Balcony £12.50',
    );
    expect(auditDetailsWords('ticket.listed', { ticketId: 't', priceCents: 2500, capCents: 2750 }, 'UTC', 'EUR')).toBe(
      'price: €25.00. most allowed: €27.50',
    );
    expect(auditDetailsWords('ticket.resold', { priceCents: 1999 }, 'UTC', 'JPY')).toBe('price: ¥1,999');
    expect(
      auditDetailsWords('order.refund', { orderId: 'x', amountCents: 5000, paymentReference: 'ch_1', reason: 'show moved' }, 'UTC', 'GBP'),
    ).toBe('£50.00 refunded. Payment ch_1. Reason: show moved');
    expect(auditDetailsWords('order.cancel', { orderId: 'x', seats: 2, amountCents: 5000, reason: 'r' }, 'UTC', 'USD')).toBe(
      'Reason: r. 2 seat(s) back. Order of $50.00',
    );
    // No event, no currency: the number, said to be in minor units, never dollars.
    expect(auditDetailsWords('ticket.resold', { priceCents: 1999 })).toBe('price: 1,999 (minor units)');
  });
});
