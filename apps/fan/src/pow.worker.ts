// Solves the join's proof-of-work off the page's thread: finds a suffix such that SHA-256(nonce + suffix) starts
// with `difficulty` zero bits, trying 0, 1, 2, ... in base 36 (the reference client's order), and reports progress.
import { searchSuffix } from '@onsale/shared/abuse/pow-hash';

export interface PowRequest {
  nonce: string;
  difficulty: number;
}
export type PowMessage = { kind: 'progress'; tries: number } | { kind: 'solved'; suffix: string; tries: number };

const STEP = 20_000;

self.onmessage = (e: MessageEvent<PowRequest>) => {
  const { nonce, difficulty } = e.data;
  const post = (m: PowMessage) => (self as unknown as Worker).postMessage(m);
  for (let start = 0; ; start += STEP) {
    const suffix = searchSuffix(nonce, difficulty, start, STEP);
    if (suffix !== null) return post({ kind: 'solved', suffix, tries: parseInt(suffix, 36) + 1 });
    post({ kind: 'progress', tries: start + STEP });
  }
};
