import { describe, expect, it } from 'vitest';
import {
  diffEventSpecs,
  eventPhase,
  EVENT_SETTING_RULES,
  EVENT_SETTINGS,
  lockedSettings,
  refusedChanges,
  sameLayout,
  type ChangeContext,
} from './change-rules.js';
import { eventFileSchema, type EventFile, type EventSpec } from './events.schema.js';

const file: EventFile = {
  name: 'Rules Night',
  venueName: 'Rule Hall',
  startsAt: '2030-06-01T19:00:00Z',
  onsaleAt: '2030-03-01T10:00:00Z',
  limits: { perAccountSeats: 4, perInstrumentSeats: 4 },
  priceLevels: [
    { code: 'P1', name: 'Front', priceCents: 10_000 },
    { code: 'P2', name: 'Back', priceCents: 5_000 },
  ],
  sections: [
    { code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 2, seatsPerRow: 3 },
    { code: 'B', name: 'Balcony', priceLevel: 'P2', qualityRank: 2, rows: [{ label: 'A', seats: 4 }] },
  ],
};
const spec = (over: Partial<EventFile> = {}): EventSpec => eventFileSchema.parse({ ...file, ...over });

const now = new Date('2030-02-01T00:00:00Z');
const before: ChangeContext = { phase: 'BEFORE_OPEN', now, queueHasFans: false, seatsInUse: false };
const open: ChangeContext = { phase: 'OPEN', now: new Date('2030-03-01T11:00:00Z'), queueHasFans: true, seatsInUse: true };

describe('eventPhase', () => {
  it('is OPEN from onsale_at on, to the millisecond', () => {
    expect(eventPhase('2030-03-01T10:00:00Z', new Date('2030-03-01T09:59:59.999Z'))).toBe('BEFORE_OPEN');
    expect(eventPhase('2030-03-01T10:00:00Z', new Date('2030-03-01T10:00:00.000Z'))).toBe('OPEN');
  });
});

describe('diffEventSpecs', () => {
  it('finds nothing between a file and itself, or the same layout written another way', () => {
    expect(diffEventSpecs(spec(), spec())).toEqual([]);
    // The same instants with another offset; the grid written out as rows; sections and levels in another order.
    const rewritten = spec({
      startsAt: '2030-06-01T21:00:00+02:00',
      sections: [
        { code: 'B', name: 'Balcony', priceLevel: 'P2', qualityRank: 2, rowCount: 1, seatsPerRow: 4 },
        {
          code: 'A',
          name: 'Stalls',
          priceLevel: 'P1',
          qualityRank: 1,
          rows: [
            { label: 'A', seats: 3 },
            { label: 'B', seats: 3 },
          ],
        },
      ],
      priceLevels: [...file.priceLevels].reverse(),
    });
    expect(diffEventSpecs(spec(), rewritten)).toEqual([]);
    expect(sameLayout(spec(), rewritten)).toBe(true);
  });

  it('names each changed setting with its old and new value; layout and prices summarised', () => {
    const after = spec({
      name: 'Renamed',
      limits: { perAccountSeats: 2, perInstrumentSeats: 4 },
      holds: { ttlSeconds: 300 },
      sections: [...file.sections, { code: 'C', priceLevel: 'P2', qualityRank: 3, rowCount: 1, seatsPerRow: 5 }],
    });
    expect(diffEventSpecs(spec(), after)).toEqual([
      { setting: 'name', from: 'Rules Night', to: 'Renamed' },
      { setting: 'limits.perAccountSeats', from: 4, to: 2 },
      // The device limit follows the account limit while it is not set.
      { setting: 'limits.perDeviceSeats', from: 4, to: 2 },
      { setting: 'holds.ttlSeconds', from: 360, to: 300 },
      { setting: 'sections', from: '2 section(s), 10 seats', to: '3 section(s), 15 seats' },
    ]);
    expect(sameLayout(spec(), after)).toBe(false);
  });

  it('tells a section attribute change apart from a layout change', () => {
    const renamed = spec({ sections: [{ ...file.sections[0]!, name: 'Orchestra' }, file.sections[1]!] });
    expect(diffEventSpecs(spec(), renamed).map((c) => c.setting)).toEqual(['sections']);
    expect(sameLayout(spec(), renamed)).toBe(true);
  });

  it('compares queue copy by content', () => {
    expect(diffEventSpecs(spec({ queueCopy: {} }), spec())).toEqual([]);
    expect(diffEventSpecs(spec(), spec({ queueCopy: { PAUSED: 'Hold tight' } }))).toEqual([
      { setting: 'queueCopy', from: {}, to: { PAUSED: 'Hold tight' } },
    ]);
  });
});

describe('refusedChanges before the open', () => {
  it('allows every setting while no fan has joined and no seat is in use', () => {
    const after = spec({
      name: 'x',
      startsAt: '2030-07-01T19:00:00Z',
      onsaleAt: '2030-04-01T10:00:00Z',
      fairnessMode: 'FIFO',
      limits: { perAccountSeats: 8, perInstrumentSeats: 8 },
      priceLevels: [{ code: 'P1', name: 'All', priceCents: 1 }],
      sections: [{ code: 'Z', priceLevel: 'P1', qualityRank: 1, rowCount: 1, seatsPerRow: 1 }],
    });
    const changes = diffEventSpecs(spec(), after);
    expect(changes.length).toBeGreaterThan(6);
    expect(refusedChanges(changes, before)).toEqual([]);
  });

  it('refuses an on-sale moved to now or the past', () => {
    const changes = diffEventSpecs(spec(), spec({ onsaleAt: now.toISOString() }));
    expect(refusedChanges(changes, before)).toEqual([expect.objectContaining({ field: 'onsaleAt', code: 'ONSALE_NOT_IN_FUTURE' })]);
  });

  it('refuses a new fairness mode once fans have joined, and a new layout or price once a seat is in use', () => {
    const changes = diffEventSpecs(
      spec(),
      spec({ fairnessMode: 'FIFO', priceLevels: [{ code: 'P1', name: 'Front', priceCents: 1 }, file.priceLevels[1]!] }),
    );
    expect(refusedChanges(changes, { ...before, queueHasFans: true, seatsInUse: true }).map((r) => [r.field, r.code])).toEqual([
      ['fairnessMode', 'QUEUE_HAS_FANS'],
      ['priceLevels', 'SEATS_IN_USE'],
    ]);
  });
});

describe('refusedChanges after the open', () => {
  it('refuses every BEFORE_OPEN setting, at its field', () => {
    const after = spec({
      startsAt: '2030-07-01T19:00:00Z',
      onsaleAt: '2030-03-02T10:00:00Z',
      seatPickingOpensAfterMinutes: 5,
      fairnessMode: 'FIFO',
      priceLevels: [{ code: 'P1', name: 'Front', priceCents: 1 }, file.priceLevels[1]!],
      sections: [file.sections[0]!],
    });
    const refused = refusedChanges(diffEventSpecs(spec(), after), open);
    expect(refused.map((r) => r.field)).toEqual([
      'startsAt',
      'onsaleAt',
      'seatPickingOpensAfterMinutes',
      'fairnessMode',
      'priceLevels',
      'sections',
    ]);
    expect(refused.every((r) => r.code === 'LOCKED_AFTER_OPEN')).toBe(true);
  });

  it('lets a limit be lowered, never raised', () => {
    const lowered = diffEventSpecs(spec(), spec({ limits: { perAccountSeats: 2, perInstrumentSeats: 3, perDeviceSeats: 2 } }));
    expect(refusedChanges(lowered, open)).toEqual([]);
    const raised = diffEventSpecs(spec(), spec({ limits: { perAccountSeats: 6, perInstrumentSeats: 4, perDeviceSeats: 4 } }));
    expect(refusedChanges(raised, open)).toEqual([
      expect.objectContaining({ field: 'limits.perAccountSeats', code: 'LIMIT_RAISED_AFTER_OPEN' }),
    ]);
  });

  it('allows display, pacing, hold times and queue copy', () => {
    const after = spec({
      name: 'New name',
      venueName: 'New hall',
      holds: { ttlSeconds: 240, extensionSeconds: 60 },
      pacing: { targetSaleMinutes: 40, ticketsPerOrder: 3, checkoutMinutes: 4, paymentTps: 200, overbookFactor: 1.1 },
      queueCopy: { WAITING: 'Soon' },
    });
    const changes = diffEventSpecs(spec(), after);
    expect(changes).toHaveLength(10);
    expect(refusedChanges(changes, open)).toEqual([]);
  });
});

describe('lockedSettings', () => {
  it('locks every BEFORE_OPEN setting after the open, with its reason', () => {
    const locked = lockedSettings(open);
    expect(Object.keys(locked).sort()).toEqual(EVENT_SETTINGS.filter((s) => EVENT_SETTING_RULES[s].rule === 'BEFORE_OPEN').sort());
    expect(locked.sections).toContain('held and sold');
  });

  it('before the open, locks the mode once fans joined and the layout once a seat is in use', () => {
    expect(lockedSettings(before)).toEqual({});
    expect(Object.keys(lockedSettings({ ...before, queueHasFans: true }))).toEqual(['fairnessMode']);
    expect(Object.keys(lockedSettings({ ...before, seatsInUse: true })).sort()).toEqual([
      'allocations',
      'currency',
      'priceLevels',
      'sections',
    ]);
  });

  it('before the open, locks the tiers and the layout they split once a tier has opened, and the tiers once a presale queue has fans', () => {
    const opened = lockedSettings({ ...before, tiersStartAt: new Date(now.getTime() - 1) });
    expect(Object.keys(opened).sort()).toEqual(['allocations', 'priceLevels', 'sections']);
    expect(opened.allocations).toContain('first presale tier opened');
    expect(lockedSettings({ ...before, tiersStartAt: new Date(now.getTime() + 60_000) })).toEqual({});
    expect(Object.keys(lockedSettings({ ...before, presaleQueueHasFans: true }))).toEqual(['allocations']);
  });
});

describe('presale tiers', () => {
  const tiers = (over: Record<string, unknown> = {}): EventFile['allocations'] => [
    {
      code: 'FANS',
      name: 'Fan club',
      share: 0.3,
      access: 'ACCESS_CODE',
      opensAt: '2030-02-20T10:00:00Z',
      closesAt: '2030-02-21T10:00:00Z',
      ...over,
    },
    { code: 'GEN', name: 'General sale' },
  ];

  it('compares tiers as they take effect: instants, the roll defaulting to the close, the general sale without its own window', () => {
    expect(diffEventSpecs(spec({ allocations: tiers() }), spec({ allocations: tiers() }))).toEqual([]);
    const same = tiers({ opensAt: '2030-02-20T11:00:00+01:00', rollsForwardAt: '2030-02-21T10:00:00Z' });
    expect(diffEventSpecs(spec({ allocations: tiers() }), spec({ allocations: same }))).toEqual([]);
    // The general sale's fairness mode is the event's: what a file says for it is not a change.
    const generalMode = [tiers()![0]!, { code: 'GEN', name: 'General sale', fairnessMode: 'FIFO' as const }];
    expect(diffEventSpecs(spec({ allocations: tiers() }), spec({ allocations: generalMode }))).toEqual([]);
  });

  it('names a tier change with a line per tier; adding and removing tiers are changes too', () => {
    const changes = diffEventSpecs(spec({ allocations: tiers() }), spec({ allocations: tiers({ share: 0.25 }) }));
    expect(changes).toEqual([
      {
        setting: 'allocations',
        from: [
          'FANS Fan club: 30%, ACCESS_CODE, 2030-02-20T10:00:00.000Z to 2030-02-21T10:00:00.000Z, rolls 2030-02-21T10:00:00.000Z, RANDOMIZED_PREOPEN_THEN_FIFO',
          'GEN General sale: general sale, the rest, OPEN',
        ],
        to: [
          'FANS Fan club: 25%, ACCESS_CODE, 2030-02-20T10:00:00.000Z to 2030-02-21T10:00:00.000Z, rolls 2030-02-21T10:00:00.000Z, RANDOMIZED_PREOPEN_THEN_FIFO',
          'GEN General sale: general sale, the rest, OPEN',
        ],
      },
    ]);
    expect(diffEventSpecs(spec(), spec({ allocations: tiers() })).map((c) => [c.setting, c.from])).toEqual([['allocations', []]]);
    expect(diffEventSpecs(spec({ allocations: tiers() }), spec()).map((c) => [c.setting, c.to])).toEqual([['allocations', []]]);
  });

  it('allows new tiers before any opens with no seat in use and nobody in a presale queue; refuses them otherwise, at the field', () => {
    const changes = diffEventSpecs(spec({ allocations: tiers() }), spec({ allocations: tiers({ share: 0.5 }) }));
    expect(refusedChanges(changes, { ...before, tiersStartAt: new Date('2030-02-20T10:00:00Z') })).toEqual([]);
    const codes = (ctx: Partial<ChangeContext>) => refusedChanges(changes, { ...before, ...ctx }).map((r) => [r.field, r.code]);
    expect(codes({ seatsInUse: true })).toEqual([['allocations', 'SEATS_IN_USE']]);
    expect(codes({ tiersStartAt: new Date(now.getTime() - 1000) })).toEqual([['allocations', 'PRESALE_OPENED']]);
    expect(codes({ presaleQueueHasFans: true })).toEqual([['allocations', 'QUEUE_HAS_FANS']]);
    expect(refusedChanges(changes, open).map((r) => [r.field, r.code])).toEqual([['allocations', 'LOCKED_AFTER_OPEN']]);
    // Once a tier sells, the seats it splits are fixed too.
    const relayout = diffEventSpecs(spec({ allocations: tiers() }), spec({ allocations: tiers(), sections: [file.sections[0]!] }));
    expect(refusedChanges(relayout, { ...before, tiersStartAt: new Date(now.getTime() - 1000) }).map((r) => [r.field, r.code])).toEqual([
      ['sections', 'PRESALE_OPENED'],
    ]);
  });
});

describe('registration lottery', () => {
  const lottery = (over: Record<string, unknown> = {}): Partial<EventFile> => ({
    fairnessMode: 'REGISTRATION_LOTTERY',
    lottery: { registrationOpensAt: '2030-02-10T10:00:00Z', registrationClosesAt: '2030-02-20T10:00:00Z', ...over },
  });
  const registering = (ctx: Partial<ChangeContext> = {}): ChangeContext => ({
    ...before,
    lottery: { registrationOpensAt: new Date('2030-02-10T10:00:00Z'), registrations: 0, drawnAt: null },
    ...ctx,
  });

  it('compares settings as they take effect (instants, defaults filled in) and names a change with its old and new settings', () => {
    expect(diffEventSpecs(spec(lottery()), spec(lottery({ registrationOpensAt: '2030-02-10T11:00:00+01:00', cohorts: 4 })))).toEqual([]);
    expect(diffEventSpecs(spec(lottery()), spec(lottery({ cohortMinutes: 30 })))).toEqual([
      {
        setting: 'lottery',
        from: {
          registrationOpensAt: '2030-02-10T10:00:00.000Z',
          registrationClosesAt: '2030-02-20T10:00:00.000Z',
          expectedConversion: 0.8,
          cohorts: 4,
          cohortMinutes: 60,
        },
        to: {
          registrationOpensAt: '2030-02-10T10:00:00.000Z',
          registrationClosesAt: '2030-02-20T10:00:00.000Z',
          expectedConversion: 0.8,
          cohorts: 4,
          cohortMinutes: 30,
        },
      },
    ]);
    // Switching to or from the lottery is a mode change and a lottery change.
    expect(diffEventSpecs(spec(), spec(lottery())).map((c) => [c.setting, c.from])).toEqual([
      ['fairnessMode', 'RANDOMIZED_PREOPEN_THEN_FIFO'],
      ['lottery', null],
    ]);
    expect(diffEventSpecs(spec(lottery()), spec()).map((c) => [c.setting, c.to])).toEqual([
      ['fairnessMode', 'RANDOMIZED_PREOPEN_THEN_FIFO'],
      ['lottery', null],
    ]);
  });

  it('allows lottery changes, and a switch to or from the lottery, until registration opens', () => {
    const changes = diffEventSpecs(spec(lottery()), spec(lottery({ expectedConversion: 0.5 })));
    expect(refusedChanges(changes, registering())).toEqual([]);
    expect(refusedChanges(diffEventSpecs(spec(lottery()), spec()), registering())).toEqual([]);
    expect(refusedChanges(diffEventSpecs(spec(), spec(lottery())), before)).toEqual([]);
    expect(lockedSettings(registering())).toEqual({});
  });

  it('refuses them once registration has opened (REGISTRATION_OPENED) and once drawn (LOTTERY_DRAWN, the on-sale too), at their fields', () => {
    const codes = (b: EventSpec, a: EventSpec, ctx: ChangeContext) =>
      refusedChanges(diffEventSpecs(b, a), ctx).map((r) => [r.field, r.code]);
    const opened = registering({ now: new Date('2030-02-10T10:00:00Z') });
    expect(codes(spec(lottery()), spec(lottery({ cohorts: 2 })), opened)).toEqual([['lottery', 'REGISTRATION_OPENED']]);
    // A registration counts whatever the clock says.
    const registered = registering({ lottery: { registrationOpensAt: new Date('2030-02-10T10:00:00Z'), registrations: 1, drawnAt: null } });
    expect(codes(spec(lottery()), spec(lottery({ cohorts: 2 })), registered)).toEqual([['lottery', 'REGISTRATION_OPENED']]);
    // Leaving the lottery: the mode may change, the lottery may not, so the refusal is at `lottery`.
    expect(codes(spec(lottery()), spec(), opened)).toEqual([['lottery', 'REGISTRATION_OPENED']]);
    expect(refusedChanges(diffEventSpecs(spec(lottery()), spec(lottery({ cohorts: 2 }))), opened)[0]!.message).toContain(
      'registration opened at 2030-02-10T10:00:00.000Z',
    );
    expect(Object.keys(lockedSettings(opened)).sort()).toEqual(['fairnessMode', 'lottery']);

    const drawn = registering({
      now: new Date('2030-02-21T00:00:00Z'),
      lottery: { registrationOpensAt: new Date('2030-02-10T10:00:00Z'), registrations: 5, drawnAt: new Date('2030-02-20T12:00:00Z') },
    });
    expect(codes(spec(lottery()), spec(lottery({ cohorts: 2 })), drawn)).toEqual([['lottery', 'LOTTERY_DRAWN']]);
    expect(codes(spec(lottery()), spec({ ...lottery(), onsaleAt: '2030-03-02T10:00:00Z' }), drawn)).toEqual([
      ['onsaleAt', 'LOTTERY_DRAWN'],
    ]);
    expect(codes(spec(lottery()), spec({ ...lottery(), name: 'Still fine' }), drawn)).toEqual([]);
    const locked = lockedSettings(drawn);
    expect(Object.keys(locked).sort()).toEqual(['fairnessMode', 'lottery', 'onsaleAt']);
    expect(locked.onsaleAt).toContain('purchase windows');
    // After the open too, the draw is the reason given.
    expect(
      codes(spec(lottery()), spec(lottery({ cohorts: 2 })), { ...drawn, phase: 'OPEN', now: new Date('2030-03-01T11:00:00Z') }),
    ).toEqual([['lottery', 'LOTTERY_DRAWN']]);
    expect(lockedSettings({ ...drawn, phase: 'OPEN' }).lottery).toContain('the draw ran');
  });
});
