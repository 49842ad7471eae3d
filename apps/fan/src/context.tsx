import { createContext, useContext } from 'react';
import type { EventSection } from '@onsale/shared/events';
import type { ApiContext } from './api';
import type { Formatters, FanLanguage, Strings } from './i18n';
import type { CopyByLanguage, FanLook } from './look';
import type { Account, EventProgress } from './session';

/** GET /events/:id as the page reads it. */
export interface EventPage {
  id: string;
  listingId: string;
  name: string;
  venueName: string;
  startsAt: string;
  onsaleAt: string;
  seatPickingOpensAt: string;
  fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' | 'FIFO' | 'REGISTRATION_LOTTERY';
  perAccountSeatLimit: number;
  holdTtlSeconds: number;
  holdExtensionSeconds: number;
  /** How long an admitted fan's turn lasts. */
  turnSeconds: number;
  capacity: number;
  /** ISO 4217: every amount of the event is in it. */
  currency: string;
  /** The venue's IANA time zone: the show's date and time are shown on its clock. */
  timeZone: string;
  sections: Omit<EventSection, 'qualityRank'>[];
  look?: FanLook | null;
  copy?: CopyByLanguage;
}

/** GET /fan/config: how fans sign in here, and whether to list test cards. */
export interface FanConfig {
  devSignIn: boolean;
  oidc: {
    issuer: string;
    clientId: string;
    scope: string;
    audience: string | null;
    useToken: 'access_token' | 'id_token';
    redirectPath: string;
  } | null;
  testCards: { number: string; outcome: 'success' | 'declined' }[] | null;
}

export interface Fan {
  event: EventPage;
  config: FanConfig;
  lang: FanLanguage;
  t: Strings;
  f: Formatters;
  account: Account;
  api: ApiContext;
  progress: EventProgress;
  /** Merges into this fan's progress for the event and keeps it on the device. */
  update: (patch: Partial<EventProgress> | ((p: EventProgress) => EventProgress)) => void;
  /** The sale has sold out (the queue said SOLD_OUT): the waitlist is what is left. */
  soldOut: boolean;
  setSoldOut: (v: boolean) => void;
  /** Says something in the page's polite live region (admission, a hold about to end, a refusal). */
  announce: (text: string) => void;
}

export const FanContext = createContext<Fan | null>(null);

export function useFan(): Fan {
  const f = useContext(FanContext);
  if (!f) throw new Error('useFan outside FanContext');
  return f;
}

/** A refusal in plain words: the page's own sentence for the code, else the server's message. */
export function refusalText(t: Strings, err: { error: string; message: string }): string {
  return t.refused[err.error] ?? t.somethingWrong(err.message);
}
