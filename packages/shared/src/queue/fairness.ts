// The provably fair pre-open order. Web Crypto only (globalThis.crypto), no imports: an edge worker runs this
// file as is, and anyone can re-implement it from VERIFICATION_RECIPE below.

/** Fairness modes an event can be run under (rule 1 in docs/architecture.md). */
export type FairnessMode = 'RANDOMIZED_PREOPEN_THEN_FIFO' | 'FIFO' | 'REGISTRATION_LOTTERY';

/** Feistel rounds of the permutation. Six rounds of a balanced Feistel network with a keyed PRF are a strong PRP. */
export const FEISTEL_ROUNDS = 6;
/** Largest cohort the permutation covers: the domain is at most 32 bits (two 16-bit halves). */
export const MAX_COHORT_SIZE = 2 ** 32;
/** Seeds are exactly 32 bytes, written as 64 hex digits. */
export const SEED_BYTES = 32;

/** Bad input to a fairness function (a seed that is not 64 hex digits, a cohort size or join index out of range). */
export class FairnessInputError extends RangeError {
  readonly code = 'INVALID_FAIRNESS_INPUT';
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'FairnessInputError';
  }
}

/** Web Crypto's SubtleCrypto, typed from the global so this file needs no imports (not even type-only ones). */
export type Subtle = typeof globalThis.crypto.subtle;
/** Web Crypto's CryptoKey, typed from the global for the same reason. */
export type WebCryptoKey = Awaited<ReturnType<Subtle['importKey']>>;

const subtle = (): Subtle => globalThis.crypto.subtle;

function seedBytes(seedHex: string): Uint8Array<ArrayBuffer> {
  if (typeof seedHex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(seedHex))
    throw new FairnessInputError(`the seed must be ${SEED_BYTES} bytes written as 64 hex digits`, 'seedHex');
  const out = new Uint8Array(SEED_BYTES);
  for (let i = 0; i < SEED_BYTES; i++) out[i] = parseInt(seedHex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = '';
  for (const b of view) out += b.toString(16).padStart(2, '0');
  return out;
}

/** A fresh seed: 32 random bytes from crypto.getRandomValues, as 64 lowercase hex digits. */
export function generateSeed(): string {
  return toHex(globalThis.crypto.getRandomValues(new Uint8Array(SEED_BYTES)));
}

/** The published commitment: SHA-256 of the seed's 32 bytes (not of its hex text), as 64 lowercase hex digits. */
export async function commitSeed(seedHex: string): Promise<string> {
  return toHex(await subtle().digest('SHA-256', seedBytes(seedHex)));
}

/** True when the revealed seed hashes to the commitment published before the open (hex case-insensitive). */
export async function verifyCommitment(seedHex: string, commitmentHex: string): Promise<boolean> {
  if (!/^[0-9a-fA-F]{64}$/.test(commitmentHex) || !/^[0-9a-fA-F]{64}$/.test(seedHex)) return false;
  return (await commitSeed(seedHex)) === commitmentHex.toLowerCase();
}

/**
 * The permutation's domain for a cohort: the smallest even bit width 2k (k >= 1) with 2^(2k) >= cohortSize,
 * split into two k-bit halves.
 */
export function permutationDomain(cohortSize: number): { halfBits: number; domainSize: number } {
  if (!Number.isInteger(cohortSize) || cohortSize < 1 || cohortSize > MAX_COHORT_SIZE)
    throw new FairnessInputError(`cohortSize must be an integer from 1 to ${MAX_COHORT_SIZE}`, 'cohortSize');
  let halfBits = 1;
  while (2 ** (2 * halfBits) < cohortSize) halfBits++;
  return { halfBits, domainSize: 2 ** (2 * halfBits) };
}

/** A keyed permutation of [0, cohortSize): the HMAC key is imported once and round values are memoized. */
export interface Permuter {
  readonly cohortSize: number;
  readonly halfBits: number;
  /** The 0-based slot of the fan with this 0-based join index; their queue position is slot + 1. */
  position(joinIndex: number): Promise<number>;
  /**
   * The slot without a promise when every round value it needs is already computed (a busy cohort's polls, after
   * the first ones); undefined otherwise, or for a join index outside the cohort (position() says why).
   */
  knownPosition(joinIndex: number): number | undefined;
  /** The whole permutation: result[joinIndex] = slot. */
  positions(): Promise<Uint32Array>;
}

/**
 * A permuter for one seed and cohort size. Round values depend only on (round, right half), so there are at most
 * FEISTEL_ROUNDS x 2^halfBits of them (3,072 for a 100,000 cohort): each is computed once, after which a position
 * is a handful of table look-ups. Creating one is synchronous; the key is imported on first use.
 */
export function createPermuter(seedHex: string, cohortSize: number): Permuter {
  const seed = seedBytes(seedHex);
  const { halfBits } = permutationDomain(cohortSize);
  const halfSize = 2 ** halfBits;
  const mask = halfSize - 1;
  const table = new Uint32Array(FEISTEL_ROUNDS * halfSize);
  const known = new Uint8Array(FEISTEL_ROUNDS * halfSize);
  const pending = new Map<number, Promise<number>>();
  let key: Promise<WebCryptoKey> | undefined;
  const hmacKey = () => (key ??= subtle().importKey('raw', seed, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));

  // F(round, right) = first 4 bytes of HMAC-SHA256(seed, u32be(round) || u32be(right)), big-endian, low halfBits bits.
  async function computeRound(round: number, right: number): Promise<number> {
    const msg = new Uint8Array(8);
    const view = new DataView(msg.buffer);
    view.setUint32(0, round);
    view.setUint32(4, right);
    const mac = await subtle().sign('HMAC', await hmacKey(), msg);
    return new DataView(mac).getUint32(0) & mask;
  }

  function roundValue(round: number, right: number): number | Promise<number> {
    const i = round * halfSize + right;
    if (known[i]) return table[i]!;
    let p = pending.get(i);
    if (!p) {
      p = computeRound(round, right).then((v) => {
        table[i] = v;
        known[i] = 1;
        pending.delete(i);
        return v;
      });
      pending.set(i, p);
    }
    return p;
  }

  async function encrypt(x: number): Promise<number> {
    let left = Math.floor(x / halfSize);
    let right = x % halfSize;
    for (let r = 0; r < FEISTEL_ROUNDS; r++) {
      const f = await roundValue(r, right);
      [left, right] = [right, left ^ f];
    }
    return left * halfSize + right;
  }

  function encryptKnown(x: number): number {
    let left = Math.floor(x / halfSize);
    let right = x % halfSize;
    for (let r = 0; r < FEISTEL_ROUNDS; r++) [left, right] = [right, left ^ table[r * halfSize + right]!];
    return left * halfSize + right;
  }

  function checkIndex(joinIndex: number): void {
    if (!Number.isInteger(joinIndex) || joinIndex < 0 || joinIndex >= cohortSize)
      throw new FairnessInputError(`joinIndex must be an integer from 0 to ${cohortSize - 1}`, 'joinIndex');
  }

  return {
    cohortSize,
    halfBits,
    async position(joinIndex) {
      checkIndex(joinIndex);
      // Cycle-walking: the domain is up to 4x the cohort; re-encrypt until the value lands inside it.
      let x = joinIndex;
      do x = await encrypt(x);
      while (x >= cohortSize);
      return x;
    },
    knownPosition(joinIndex) {
      if (!Number.isInteger(joinIndex) || joinIndex < 0 || joinIndex >= cohortSize) return undefined;
      let x = joinIndex;
      do {
        let left = Math.floor(x / halfSize);
        let right = x % halfSize;
        for (let r = 0; r < FEISTEL_ROUNDS; r++) {
          const i = r * halfSize + right;
          if (!known[i]) return undefined;
          const next = left ^ table[i]!;
          left = right;
          right = next;
        }
        x = left * halfSize + right;
      } while (x >= cohortSize);
      return x;
    },
    async positions() {
      const BATCH = 4096;
      for (let start = 0; start < table.length; start += BATCH) {
        const batch: Promise<number>[] = [];
        for (let i = start; i < Math.min(start + BATCH, table.length); i++) {
          const v = roundValue(Math.floor(i / halfSize), i % halfSize);
          if (typeof v !== 'number') batch.push(v);
        }
        await Promise.all(batch);
      }
      const out = new Uint32Array(cohortSize);
      for (let j = 0; j < cohortSize; j++) {
        let x = j;
        do x = encryptKnown(x);
        while (x >= cohortSize);
        out[j] = x;
      }
      return out;
    },
  };
}

// A few recent permuters, so polls for the same event reuse the key and the round table. A memo of a pure
// function, bounded; nothing here stands in for stored state.
const RECENT_PERMUTERS = 8;
const recent = new Map<string, Permuter>();
function cachedPermuter(seedHex: string, cohortSize: number): Permuter {
  const id = `${seedHex.toLowerCase()}:${cohortSize}`;
  let p = recent.get(id);
  if (p) {
    recent.delete(id);
  } else {
    p = createPermuter(seedHex, cohortSize);
    if (recent.size >= RECENT_PERMUTERS) recent.delete(recent.keys().next().value!);
  }
  recent.set(id, p);
  return p;
}

/**
 * The 0-based slot of join index `joinIndex` in a cohort of `cohortSize` under `seedHex`: a keyed pseudo-random
 * permutation (balanced Feistel, HMAC-SHA256 rounds, cycle-walking; see VERIFICATION_RECIPE). The fan's queue
 * position is slot + 1.
 */
export async function permutePosition(seedHex: string, cohortSize: number, joinIndex: number): Promise<number> {
  return cachedPermuter(seedHex, cohortSize).position(joinIndex);
}

/** permutePosition without a promise once the rounds it needs are computed (the status poll's hot path). */
export function permutePositionNow(seedHex: string, cohortSize: number, joinIndex: number): number | Promise<number> {
  const p = cachedPermuter(seedHex, cohortSize);
  return p.knownPosition(joinIndex) ?? p.position(joinIndex);
}

/** The whole permutation for an audit: result[joinIndex] = 0-based slot. */
export async function cohortPositions(seedHex: string, cohortSize: number): Promise<Uint32Array> {
  return createPermuter(seedHex, cohortSize).positions();
}

/** What a fan reads about how the queue orders them, in plain words. */
export function fairnessDescription(mode: FairnessMode): string {
  switch (mode) {
    case 'RANDOMIZED_PREOPEN_THEN_FIFO':
      return (
        'Everyone who joins before the on-sale opens is placed in a random order when it opens, so joining early ' +
        'or refreshing at the last second gives no advantage. Anyone who joins after the opening goes behind that ' +
        'group, in the order they joined. Each account gets one place in the queue. Before the sale we publish a ' +
        'fingerprint of the random draw; when it opens we publish the draw itself, so anyone can check that every ' +
        'place was given out exactly as promised.'
      );
    case 'FIFO':
      return (
        'Fans are let in in the order they joined the queue: the earlier you join, the sooner your turn comes. ' +
        'Each account gets one place in the queue.'
      );
    case 'REGISTRATION_LOTTERY':
      return (
        'Fans register before the sale. When registration closes, every registered fan is placed in a random ' +
        'order by a draw, and fans are invited to buy in that order; when you registered makes no difference. ' +
        'Each account can register once. Before the draw we publish a fingerprint of it, and afterwards the draw ' +
        'itself, so anyone can check that every place was given out exactly as promised.'
      );
    default: {
      const never: never = mode;
      throw new FairnessInputError(`unknown fairness mode ${String(never)}`, 'mode');
    }
  }
}

/** The published recipe: enough to recompute every pre-open position from the seed, the cohort size and a join index. */
export const VERIFICATION_RECIPE = `How to check your place in the queue (pre-open cohort, format v1)

Published data
  commitment   64 hex digits, published before the on-sale opened
  seed         64 hex digits, published when it opened
  cohortSize   n: how many accounts joined before the open
  joinIndex    j: your 0-based join number, shown on your queue ticket (0 <= j < n)

1. Check the seed. Decode the seed's 64 hex digits into 32 bytes S. SHA-256(S), written as 64 lowercase hex
   digits, must equal the commitment. (Hash the 32 bytes, not the hex text.)

2. Domain. Let k be the smallest integer >= 1 with 2^(2k) >= n. Values are 2k-bit integers in [0, 2^(2k)),
   split into a high half L = floor(x / 2^k) and a low half R = x mod 2^k.

3. Round function. For round r (0..5) and a k-bit value R:
     message = 8 bytes: r as an unsigned 32-bit big-endian integer, then R as an unsigned 32-bit big-endian integer
     mac     = HMAC-SHA256(key = S, message)          (RFC 2104, 32-byte key)
     F(r, R) = (first 4 bytes of mac read as an unsigned 32-bit big-endian integer) mod 2^k

4. One pass E(x): (L, R) = (floor(x / 2^k), x mod 2^k); for r = 0, 1, 2, 3, 4, 5 in turn:
     (L, R) = (R, L XOR F(r, R))
   E(x) = L * 2^k + R. E is a permutation of [0, 2^(2k)).

5. Cycle-walking. x = E(j); while x >= n: x = E(x). The result slot is in [0, n).

6. Your queue position is slot + 1. Every join index 0..n-1 maps to a different slot, so the n positions are
   exactly 1..n. Fans who joined after the open are behind the cohort: position = joinIndex + 1, where their
   join indexes continue from n.

Test vectors:
  seed = 64 zeros, n = 10:                join indexes 0..9 map to slots 2, 4, 9, 8, 6, 1, 3, 0, 5, 7
  seed = "ab" repeated 32 times, n = 1000: join indexes 0..4 map to slots 150, 930, 431, 121, 288
`;
