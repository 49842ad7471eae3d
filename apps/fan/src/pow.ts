import type { PowMessage } from './pow.worker';

export interface Challenge {
  token: string;
  nonce: string;
  difficulty: number;
  expiresAt: string;
}

/**
 * Solves a CHALLENGE_REQUIRED in a Web Worker; `onProgress` gets an estimate in percent (2^difficulty tries are
 * expected; shown as at most 99 until solved). Resolves to the X-Proof-Of-Work header's value.
 */
export function solveInWorker(c: Challenge, onProgress: (pct: number) => void, signal?: AbortSignal): Promise<string> {
  const worker = new Worker(new URL('./pow.worker.ts', import.meta.url), { type: 'module' });
  const expected = 2 ** c.difficulty;
  return new Promise((resolve, reject) => {
    const stop = () => {
      worker.terminate();
      reject(new DOMException('aborted', 'AbortError'));
    };
    signal?.addEventListener('abort', stop, { once: true });
    worker.onmessage = (e: MessageEvent<PowMessage>) => {
      if (e.data.kind === 'progress') onProgress(Math.min(99, Math.floor((100 * e.data.tries) / (expected * 1.5))));
      else {
        onProgress(100);
        worker.terminate();
        signal?.removeEventListener('abort', stop);
        resolve(`${c.token}:${e.data.suffix}`);
      }
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(e.message));
    };
    worker.postMessage({ nonce: c.nonce, difficulty: c.difficulty });
  });
}
