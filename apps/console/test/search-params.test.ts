import { describe, expect, it } from 'vitest';
import { parseSearch } from '../src/search-params';

// The support page's links carry an order reference as typed (8 hex digits): one that looks like a number must
// still find its order, so it must come back from the URL as typed.
describe('the console reads search values as typed', () => {
  it('keeps references that would read as another number as their text', () => {
    expect(parseSearch('?q=00012345')).toEqual({ q: '00012345' });
    expect(parseSearch('?q=1E345678')).toEqual({ q: '1E345678' });
    expect(parseSearch('?q=12345E67')).toEqual({ q: '12345E67' });
    expect(parseSearch('?q=1A2B3C4D')).toEqual({ q: '1A2B3C4D' });
  });

  it('reads a number that reads back as itself, JSON and plain text as the default does', () => {
    expect(parseSearch('?q=12345678&page=2')).toEqual({ q: 12345678, page: 2 });
    expect(parseSearch('?redirect=%22%2Fevents%22&on=true')).toEqual({ redirect: '/events', on: true });
    expect(parseSearch('?account=8d0e4c4e-5b8f-4a52-9f55-2f0a4f7a1b33')).toEqual({ account: '8d0e4c4e-5b8f-4a52-9f55-2f0a4f7a1b33' });
  });
});
