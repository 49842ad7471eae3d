// Solves the join's proof-of-work off the page's thread: finds a suffix such that SHA-256(nonce + suffix) starts
// with `difficulty` zero bits, trying 0, 1, 2, ... in base 36 (the reference client's order), and reports progress.
import { sha256 } from '@noble/hashes/sha2.js';

export interface PowRequest {
  nonce: string;
  difficulty: number;
}
export type PowMessage = { kind: 'progress'; tries: number } | { kind: 'solved'; suffix: string; tries: number };

const utf8 = new TextEncoder();

function leadingZeroBits(d: Uint8Array): number {
  let bits = 0;
  for (const byte of d) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

self.onmessage = (e: MessageEvent<PowRequest>) => {
  const { nonce, difficulty } = e.data;
  for (let i = 0; ; i++) {
    const suffix = i.toString(36);
    if (leadingZeroBits(sha256(utf8.encode(nonce + suffix))) >= difficulty) {
      (self as unknown as Worker).postMessage({ kind: 'solved', suffix, tries: i + 1 } satisfies PowMessage);
      return;
    }
    if ((i & 0x3fff) === 0 && i > 0) (self as unknown as Worker).postMessage({ kind: 'progress', tries: i } satisfies PowMessage);
  }
};
