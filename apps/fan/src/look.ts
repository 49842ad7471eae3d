// The promoter's look as the page applies it: a logo, four colours and the per-state words per language.
import type { CSSProperties } from 'react';
import type { QueueCopy } from '@onsale/shared/queue/copy';
import type { FanLanguage } from './i18n';

export interface FanLookColors {
  /** Header bar and buttons. */
  brand?: string;
  /** Text on the brand colour. */
  brandText?: string;
  /** The page behind the cards. */
  background?: string;
  /** Body text. */
  text?: string;
}

export interface FanLook {
  logoUrl?: string;
  logoAlt?: string;
  colors?: FanLookColors;
}

export const DEFAULT_COLORS: Required<FanLookColors> = { brand: '#1f2a44', brandText: '#ffffff', background: '#f4f5f8', text: '#1a202c' };

/** The look's colours as the CSS custom properties the page's stylesheet reads. */
export function lookStyle(look: FanLook | null | undefined): CSSProperties {
  const c = { ...DEFAULT_COLORS, ...(look?.colors ?? {}) };
  return { '--fan-brand': c.brand, '--fan-brand-text': c.brandText, '--fan-bg': c.background, '--fan-text': c.text } as CSSProperties;
}

/** The event's words for a state in a language (the page falls back to these when the answer was not in it). */
export type CopyByLanguage = Record<FanLanguage, QueueCopy>;
