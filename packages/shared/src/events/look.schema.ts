import { z } from 'zod';
import { FAN_LANGUAGES, type FanLanguage } from './limits.js';

// The promoter's look for the fans' page: a logo, four colours and the per-state words in each language beside
// English (English is the event's `queueCopy`). Browser-safe: the console's form checks it with this schema.

const hexColor = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'write the colour as #rrggbb, e.g. #1f2a44');
const LOGO = /^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/]+=*$/;
/** A logo given inline (a data: URL) is at most this long: it travels with the event page. */
export const MAX_LOGO_CHARS = 48_000;

const stateCopy = z
  .object({
    WAITING: z.string().min(1).max(500),
    PAUSED: z.string().min(1).max(500),
    ADMITTED: z.string().min(1).max(500),
    LAST_CHANCE: z.string().min(1).max(500),
    SOLD_OUT: z.string().min(1).max(500),
  })
  .partial()
  .strict();

/** The languages other than English a look can carry words for. */
export const LOOK_LANGUAGES = FAN_LANGUAGES.filter((l): l is Exclude<FanLanguage, 'en'> => l !== 'en');

export const DEFAULT_LOOK_COLORS = { brand: '#1f2a44', brandText: '#ffffff', background: '#f4f5f8', text: '#1a202c' } as const;

/** WCAG relative luminance of #rrggbb. */
function luminance(hex: string): number {
  const c = [1, 3, 5]
    .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!;
}

/** The WCAG contrast ratio of two #rrggbb colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (l1 + 0.05) / (l2 + 0.05);
}

/** Text must be readable: WCAG AA asks 4.5:1 for body text. */
export const MIN_CONTRAST = 4.5;

export const lookSchema = z
  .object({
    /** An https:// address, or the image itself as a data: URL (PNG, JPEG, GIF, WebP, SVG). */
    logoUrl: z
      .string()
      .max(
        MAX_LOGO_CHARS,
        `the logo is too large: give an https:// address, or an image under ${Math.floor((MAX_LOGO_CHARS * 3) / 4 / 1024)} KB`,
      )
      .refine((v) => /^https:\/\/[^\s]+$/.test(v) || LOGO.test(v), 'give an https:// address, or a PNG, JPEG, GIF, WebP or SVG image')
      .optional(),
    /** What a screen reader says for the logo (usually the promoter's name). */
    logoAlt: z.string().max(200).optional(),
    colors: z.object({ brand: hexColor, brandText: hexColor, background: hexColor, text: hexColor }).partial().strict().optional(),
    /** Per language other than English: the words for each queue state (a state left out keeps the default words). */
    copy: z
      .object(Object.fromEntries(LOOK_LANGUAGES.map((l) => [l, stateCopy])) as Record<Exclude<FanLanguage, 'en'>, typeof stateCopy>)
      .partial()
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((look, ctx) => {
    const c = { ...DEFAULT_LOOK_COLORS, ...(look.colors ?? {}) };
    const valid = (v: string) => /^#[0-9a-fA-F]{6}$/.test(v);
    const check = (fg: 'brandText' | 'text', bg: 'brand' | 'background', what: string) => {
      if (!valid(c[fg]) || !valid(c[bg])) return;
      const ratio = contrastRatio(c[fg], c[bg]);
      if (ratio < MIN_CONTRAST)
        ctx.addIssue({
          code: 'custom',
          path: ['colors', look.colors?.[fg] !== undefined ? fg : bg],
          message: `${what} is hard to read: contrast ${ratio.toFixed(1)}:1, and at least ${MIN_CONTRAST}:1 is needed (WCAG AA)`,
        });
    };
    check('brandText', 'brand', 'text on the brand colour');
    check('text', 'background', 'text on the page background');
  });

export type EventLook = z.output<typeof lookSchema>;
