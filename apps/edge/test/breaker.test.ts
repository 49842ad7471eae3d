import { describe, expect, it, vi } from 'vitest';
import { OriginBreaker } from '../src/breaker.js';

// The circuit's rule on an injected clock: closed, open after N failures in a row, half-open after the open time
// with one trial at a time, closed by the trial's success or open again by its failure.

function breaker(failures = 3) {
  let now = 1_000_000;
  const b = new OriginBreaker({ failures, openMs: 5000, trialMs: 7000, now: () => now });
  return { b, advance: (ms: number) => void (now += ms) };
}

describe('OriginBreaker', () => {
  vi.spyOn(console, 'error').mockImplementation(() => {});

  it('stays closed below N failures in a row; a success starts the count again', () => {
    const { b } = breaker(3);
    b.failed(false);
    b.failed(false);
    b.succeeded(false);
    b.failed(false);
    b.failed(false);
    expect(b.state).toBe('closed');
    expect(b.admit()).toEqual({ send: true, trial: false });
  });

  it('opens at N failures in a row and answers with the seconds left until the trial', () => {
    const { b, advance } = breaker(3);
    for (let i = 0; i < 3; i++) b.failed(false);
    expect(b.state).toBe('open');
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 5 });
    advance(3500);
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 2 });
    advance(1400);
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 1 });
  });

  it('half-open: one trial at a time; its failure opens the circuit again for the whole open time', () => {
    const { b, advance } = breaker(1);
    b.failed(false);
    advance(5000);
    expect(b.state).toBe('half-open');
    expect(b.admit()).toEqual({ send: true, trial: true });
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 1 });
    // Requests that were already in flight when the circuit opened end meanwhile: they do not close it.
    b.failed(false);
    b.failed(true);
    expect(b.state).toBe('open');
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 5 });
  });

  it("half-open: the trial's success closes the circuit", () => {
    const { b, advance } = breaker(1);
    b.failed(false);
    advance(5000);
    expect(b.admit()).toMatchObject({ trial: true });
    b.succeeded(true);
    expect(b.state).toBe('closed');
    expect(b.admit()).toEqual({ send: true, trial: false });
  });

  it('a trial that never reports (its request cancelled) lets another try once the trial time has passed', () => {
    const { b, advance } = breaker(1);
    b.failed(false);
    advance(5000);
    expect(b.admit()).toMatchObject({ send: true, trial: true });
    advance(6999);
    expect(b.admit()).toMatchObject({ send: false });
    advance(2);
    expect(b.admit()).toEqual({ send: true, trial: true });
  });
});
