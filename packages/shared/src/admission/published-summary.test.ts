import { describe, expect, it } from 'vitest';
import { publishedMarkdown, publishedSummary, type AuditSummaryJson } from './audit.js';

// The publishable summary: the operator's complete summary with everything private taken out.
const complete: AuditSummaryJson = {
  eventId: 'e1',
  eventName: 'Night | One',
  venueName: 'Hall',
  onsaleAt: '2027-05-31T09:00:00.000Z',
  startsAt: '2027-06-30T18:00:00.000Z',
  generatedAt: '2027-05-31T12:00:00.000Z',
  timeZone: 'Europe/London',
  fairness: {
    mode: 'FIFO',
    description: 'First come, first served.',
    seedCommitment: 'abc',
    seed: 'def',
    seedRevealedAt: null,
    cohortSize: 0,
    sealedAt: null,
    howToVerify: 'npm run onsale -- audit:verify e1',
  },
  admissions: {
    admittedThrough: 10,
    totalPositionsAdvanced: 10,
    totalAdmissionTokensIssued: 8,
    perMinute: [{ minute: '2027-05-31T09:01:00.000Z', positionsAdvanced: 10, admissionTokensIssued: 8, ratePerMin: 10 }],
  },
  pauses: [
    {
      pausedAt: '2027-05-31T09:05:00.000Z',
      pausedBy: 'console:alice@ops.example',
      reason: 'acquirer 5xx spike; Bob on call',
      publicNote: 'Paused while the payment provider recovered',
      resumedAt: '2027-05-31T09:09:00.000Z',
      resumedBy: 'console:bob@ops.example',
      pausedSeconds: 240,
      reasonUpdates: [{ at: '2027-05-31T09:06:00.000Z', by: 'console:carol@ops.example', reason: 'still failing' }],
    },
    {
      pausedAt: '2027-05-31T09:20:00.000Z',
      pausedBy: 'cli:root',
      reason: 'bot wave from one ASN',
      publicNote: null,
      resumedAt: null,
      resumedBy: null,
      pausedSeconds: null,
    },
  ],
  rateOverrides: [
    { at: '2027-05-31T09:02:00.000Z', by: 'console:alice@ops.example', perMinute: 600, previousPerMinute: null, reason: 'db CPU at 90%' },
  ],
  configurationChanges: [
    { at: '2027-05-01T09:00:00.000Z', by: 'console:pat@acme.example', action: 'event.created', details: { name: 'x' } },
    {
      at: '2027-05-02T09:00:00.000Z',
      by: 'console:pat@acme.example',
      action: 'event.updated',
      details: {
        changes: [
          { setting: 'holds.ttlSeconds', from: 360, to: 300 },
          { setting: 'queueCopy', from: {}, to: { PAUSED: 'internal wording' } },
        ],
      },
    },
  ],
  soldOutAt: null,
  inventory: { capacity: 100, available: 50, held: 10, sold: 40 },
};

describe('the publishable summary', () => {
  const pub = publishedSummary(complete);
  const text = JSON.stringify(pub) + publishedMarkdown(pub);

  it('keeps what the public needs to check fairness and follow the sale', () => {
    expect(pub.fairness).toEqual(complete.fairness);
    expect(pub.admissions).toEqual(complete.admissions);
    expect(pub.pauses).toEqual([
      {
        pausedAt: '2027-05-31T09:05:00.000Z',
        resumedAt: '2027-05-31T09:09:00.000Z',
        pausedSeconds: 240,
        note: 'Paused while the payment provider recovered',
      },
      { pausedAt: '2027-05-31T09:20:00.000Z', resumedAt: null, pausedSeconds: null, note: null },
    ]);
    expect(pub.rateChanges).toEqual([{ at: '2027-05-31T09:02:00.000Z', perMinute: 600 }]);
    expect(pub.configurationChanges.map((c) => c.change)).toEqual(['Event created', 'Configuration changed: hold length, queue messages']);
    expect(publishedMarkdown(pub)).toContain('Paused while the payment provider recovered');
  });

  it('publishes no operator name or e-mail, no internal reason and no configuration value', () => {
    for (const secret of [
      'alice',
      'bob',
      'carol',
      'pat@',
      'cli:root',
      'acquirer',
      'still failing',
      'bot wave',
      'db CPU',
      'internal wording',
      '360',
      'ops.example',
    ])
      expect(text, secret).not.toContain(secret);
  });

  it("names its times in the venue's zone", () => {
    const md = publishedMarkdown(pub);
    expect(md).toContain("Times are the venue's (Europe/London)");
    expect(md).toContain('31 May 2027, 10:05 BST');
    expect(md).toContain('# On-sale summary: Night | One');
  });
});
