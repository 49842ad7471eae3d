import { describe, expect, it } from 'vitest';
import { botVerdict, DefaultBotScorer, scoreSignals, type BotSignals } from './bot-score.js';
import { DeviceSightings } from './device-sightings.js';
import { deviceFingerprint } from './device.js';

const browser: BotSignals = {
  userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  headerNames: ['host', 'user-agent', 'accept', 'accept-language', 'authorization', 'x-device-id'],
  device: { firstSeenSecondsAgo: 3600, accountsSeen: 1 },
  requestRate: { accountPerWindow: 1, ipPerWindow: 3 },
  attestation: null,
};

describe('the default bot scorer', () => {
  it('lets a browser through without friction', async () => {
    expect(await new DefaultBotScorer().score(browser)).toBe(0);
    expect(botVerdict(await new DefaultBotScorer().score({ ...browser, device: { firstSeenSecondsAgo: null, accountsSeen: 1 } }))).toBe(
      'PASS',
    );
  });

  it('challenges a script: an automation User-Agent, or none, without the headers a browser sends', () => {
    const curl = { ...browser, userAgent: 'curl/8.5.0', headerNames: ['host', 'user-agent', 'accept'] };
    expect(scoreSignals(curl)).toBeCloseTo(0.6);
    expect(botVerdict(scoreSignals(curl))).toBe('CHALLENGE');
    const bare = { ...browser, userAgent: null, headerNames: ['host'] };
    expect(botVerdict(scoreSignals(bare))).toBe('CHALLENGE');
  });

  it('puts a script that shares its device with other accounts, or hammers the API, behind everyone', () => {
    const farm = {
      ...browser,
      userAgent: 'python-requests/2.31',
      headerNames: ['host', 'user-agent'],
      device: { firstSeenSecondsAgo: 5, accountsSeen: 4 },
    };
    expect(botVerdict(scoreSignals(farm))).toBe('LOW_PRIORITY');
    const hammer = { ...browser, userAgent: null, headerNames: ['host'], requestRate: { accountPerWindow: 50, ipPerWindow: 5000 } };
    expect(botVerdict(scoreSignals(hammer))).toBe('LOW_PRIORITY');
    expect(scoreSignals({ ...farm, device: { firstSeenSecondsAgo: null, accountsSeen: 40 } })).toBe(1);
  });

  it('trusts a verified attestation and distrusts a failing one', async () => {
    const scorer = new DefaultBotScorer({ verifyAttestation: (a) => a === 'genuine' });
    const curl = { ...browser, userAgent: 'curl/8.5.0', headerNames: ['host'] };
    expect(await scorer.score({ ...curl, attestation: 'genuine' })).toBe(0);
    expect(await scorer.score({ ...browser, attestation: 'made-up' })).toBeCloseTo(0.3);
    // Without a verifier an attestation is only a header anyone can send: it changes nothing.
    expect(await new DefaultBotScorer().score({ ...curl, attestation: 'genuine' })).toBe(scoreSignals(curl));
  });

  it('maps scores to verdicts at the thresholds, and a broken score to no friction', () => {
    expect(botVerdict(0.59)).toBe('PASS');
    expect(botVerdict(0.6)).toBe('CHALLENGE');
    expect(botVerdict(0.85)).toBe('LOW_PRIORITY');
    expect(botVerdict(Number.NaN)).toBe('PASS');
    expect(botVerdict(0.5, { challenge: 0.4, lowPriority: 0.5 })).toBe('LOW_PRIORITY');
  });
});

describe('device sightings', () => {
  it('know when a device was first seen and by how many accounts', () => {
    const s = new DeviceSightings(2);
    expect(s.observe('dev-1', 'a', 1000)).toEqual({ firstSeenSecondsAgo: null, accountsSeen: 1 });
    expect(s.observe('dev-1', 'b', 6000)).toEqual({ firstSeenSecondsAgo: 5, accountsSeen: 2 });
    expect(s.observe('dev-1', 'b', 7000)).toEqual({ firstSeenSecondsAgo: 6, accountsSeen: 2 });
    s.observe('dev-2', 'a', 7000);
    s.observe('dev-3', 'a', 7000); // bounded: dev-1, the oldest, is forgotten
    expect(s.observe('dev-1', 'c', 8000).firstSeenSecondsAgo).toBeNull();
  });

  it('fingerprint a device the same whatever the account, and differently from another device', () => {
    expect(deviceFingerprint('phone-1')).toMatch(/^[0-9a-f]{64}$/);
    expect(deviceFingerprint('phone-1')).toBe(deviceFingerprint('phone-1'));
    expect(deviceFingerprint('phone-1')).not.toBe(deviceFingerprint('phone-2'));
  });
});
