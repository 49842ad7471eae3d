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
