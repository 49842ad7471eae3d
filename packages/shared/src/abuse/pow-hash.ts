// SHA-256 of a short message (at most 55 bytes: one block), with no allocation per call: the proof-of-work tries
// hundreds of thousands of suffixes on a phone, and a general-purpose hash (which allocates and pads per call) was
// 10x slower here; the reference client (solveChallenge) and the rehearsal's bots use it too. Browser-safe (no Node
// import): the fans' page runs it in a worker. Checked against node:crypto by pow-hash.test.ts.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const H0 = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const W = new Uint32Array(64);
const OUT = new Uint32Array(8);

/** The SHA-256 digest of `bytes[0..length)` (length <= 55) as eight big-endian 32-bit words (reused: copy to keep). */
export function sha256Short(bytes: Uint8Array, length: number): Uint32Array {
  if (length > 55) throw new RangeError('sha256Short takes at most 55 bytes');
  W.fill(0, 0, 16);
  for (let i = 0; i < length; i++) W[i >> 2]! |= bytes[i]! << (24 - 8 * (i & 3));
  W[length >> 2]! |= 0x80 << (24 - 8 * (length & 3));
  W[15] = length * 8;
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15]!;
    const w2 = W[i - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = H0[0]!,
    b = H0[1]!,
    c = H0[2]!,
    d = H0[3]!,
    e = H0[4]!,
    f = H0[5]!,
    g = H0[6]!,
    h = H0[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  OUT[0] = H0[0]! + a;
  OUT[1] = H0[1]! + b;
  OUT[2] = H0[2]! + c;
  OUT[3] = H0[3]! + d;
  OUT[4] = H0[4]! + e;
  OUT[5] = H0[5]! + f;
  OUT[6] = H0[6]! + g;
  OUT[7] = H0[7]! + h;
  return OUT;
}

/** Leading zero bits of a digest given as big-endian words. */
export function leadingZeroBitsOfWords(words: Uint32Array): number {
  let bits = 0;
  for (const w of words) {
    if (w === 0) {
      bits += 32;
      continue;
    }
    return bits + Math.clz32(w);
  }
  return bits;
}

/**
 * Tries suffixes from `start` (base 36, the reference client's order) for `count` tries; returns the first that gives
 * SHA-256(nonce + suffix) `difficulty` leading zero bits, or null. The nonce is ASCII (the server's hex).
 */
export function searchSuffix(nonce: string, difficulty: number, start: number, count: number): string | null {
  const buf = new Uint8Array(64);
  for (let i = 0; i < nonce.length; i++) buf[i] = nonce.charCodeAt(i);
  for (let n = start; n < start + count; n++) {
    const suffix = n.toString(36);
    let len = nonce.length;
    for (let i = 0; i < suffix.length; i++) buf[len++] = suffix.charCodeAt(i);
    if (leadingZeroBitsOfWords(sha256Short(buf, len)) >= difficulty) return suffix;
  }
  return null;
}
