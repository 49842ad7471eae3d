import { describe, expect, it } from 'vitest';
import { contrastRatio, lookSchema } from './look.schema.js';
import { eventFileSchema, formatIssues } from './events.schema.js';

const issues = (v: unknown) => {
  const r = lookSchema.safeParse(v);
  return r.success ? [] : formatIssues(r.error);
};

describe("the fans' page look", () => {
  it('takes a logo by https address or as an image data: URL, colours as #rrggbb, and Spanish words per state', () => {
    expect(
      issues({ logoUrl: 'https://cdn.example.com/logo.svg', colors: { brand: '#1f2a44' }, copy: { es: { WAITING: 'En la fila.' } } }),
    ).toEqual([]);
    expect(issues({ logoUrl: 'data:image/png;base64,iVBORw0KGgo=' })).toEqual([]);
  });

  it('refuses what would break the page or hide its words, each at its field', () => {
    expect(issues({ logoUrl: 'http://cdn.example.com/logo.png' })[0]?.path).toBe('logoUrl');
    expect(issues({ logoUrl: 'javascript:alert(1)' })[0]?.path).toBe('logoUrl');
    expect(issues({ logoUrl: `data:image/png;base64,${'A'.repeat(60_000)}` })[0]?.message).toMatch(/too large/);
    expect(issues({ colors: { brand: 'purple' } })[0]).toEqual({
      path: 'colors.brand',
      message: 'write the colour as #rrggbb, e.g. #1f2a44',
    });
    expect(issues({ copy: { fr: { WAITING: 'Dans la file.' } } })[0]?.path).toBe('copy');
    expect(issues({ copy: { es: { WAITING: '' } } })[0]?.path).toBe('copy.es.WAITING');
    expect(issues({ extra: 1 })[0]?.path).toBe('(root)');
  });

  it('refuses colours whose text would be hard to read (WCAG AA, 4.5:1)', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    const yellow = issues({ colors: { brand: '#ffee00' } });
    expect(yellow).toHaveLength(1);
    expect(yellow[0]!.path).toBe('colors.brand');
    expect(yellow[0]!.message).toMatch(/^text on the brand colour is hard to read: contrast 1\.\d:1/);
    expect(issues({ colors: { brand: '#ffee00', brandText: '#111111' } })).toEqual([]);
    expect(issues({ colors: { text: '#cccccc' } })[0]?.path).toBe('colors.text');
  });

  it('is part of the event file', () => {
    const r = eventFileSchema.safeParse({
      name: 'x',
      venueName: 'y',
      startsAt: '2031-01-02T00:00:00Z',
      onsaleAt: '2031-01-01T00:00:00Z',
      priceLevels: [{ code: 'P', name: 'P', priceCents: 100 }],
      sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 1, seatsPerRow: 1 }],
      look: { colors: { text: '#eeeeee' } },
    });
    expect(r.success).toBe(false);
    expect(formatIssues(r.error!)[0]?.path).toBe('look.colors.text');
  });
});
