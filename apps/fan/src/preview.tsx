// The fan page as the console previews it: the same Shell and QueueCard the page renders, with sample numbers, in
// each state and language, under the look being edited.
import { copyTimesOf, fillCopyTimes } from '@onsale/shared/queue/copy';
import { formatters, STRINGS, type FanLanguage } from './i18n';
import type { FanLook } from './look';
import { QueueCard, type QueueState } from './views/QueueCard';
import { Shell } from './views/Shell';
import './styles.css';

export { FAN_LANGUAGES } from './i18n';
export type { FanLook } from './look';
export type { QueueState };

export interface FanPagePreviewProps {
  event: { name: string; venueName: string; startsAt: string; onsaleAt: string; fairnessMode: string; holdTtlSeconds?: number };
  look: FanLook;
  state: QueueState;
  language: FanLanguage;
  /** The words for the state in that language (the promoter's, or the defaults); {turn} and {hold} are filled in. */
  message: string;
}

const SAMPLE = { position: 1_843, admittedThrough: 1_210, estWaitSeconds: 420 };

export function FanPagePreview({ event, look, state, language, message }: FanPagePreviewProps) {
  const t = STRINGS[language];
  const f = formatters(language);
  return (
    <Shell t={t} f={f} lang={language} event={{ id: 'preview', ...event }} look={look}>
      <QueueCard
        t={t}
        f={f}
        state={state}
        message={fillCopyTimes(message, copyTimesOf(event.holdTtlSeconds ?? 360), language)}
        position={state === 'ADMITTED' || state === 'SOLD_OUT' ? null : SAMPLE.position}
        admittedThrough={SAMPLE.admittedThrough}
        estWaitSeconds={state === 'WAITING' ? SAMPLE.estWaitSeconds : null}
        progressPct={state === 'WAITING' ? 62 : null}
        opensInSeconds={null}
      />
    </Shell>
  );
}
