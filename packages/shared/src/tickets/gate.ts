// The door when the network is gone: a gate that downloaded its event's manifest (the event's public key and every
// ticket's device generation and status) checks rotating codes by itself, with WebCrypto's Ed25519 (browsers and
// Node alike, no Node built-ins: the console's scanner page runs this), keeps its own admissions so a second scan of a
// ticket at this gate reads ALREADY_ADMITTED at once, and keeps every scan to upload when it is back: the store then
// decides across gates, and reports the double entries that two offline gates could not see.

/** What a scan answers (SCAN_RESULTS in tickets.schema.ts). */
export type GateResult = 'ADMIT' | 'ALREADY_ADMITTED' | 'EXPIRED_CODE' | 'INVALID' | 'REVOKED';

export interface GateSeat {
  section: string;
  row: string | null;
  number: number | null;
}

/** GET /scan/manifest as a gate keeps it (manifestSchema in tickets.schema.ts). */
export interface GateManifest {
  eventId: string;
  eventName: string;
  publicKey: string;
  stepSeconds: number;
  generatedAt: string;
  tickets: { ticketId: string; generation: number; status: string; seat: GateSeat }[];
}

/** One scan made offline, kept until the store has it (the upload's scans, with what the gate answered). */
export interface OfflineScan {
  scanId: string;
  code: string;
  scannedAt: string;
  result: GateResult;
  ticketId: string | null;
}

export interface GateCheck {
  result: GateResult;
  ticketId: string | null;
  seat: GateSeat | null;
  /** Why, for the log: a malformed code, a forged signature, a step ahead of the clock, an old device's code... */
  reason: string;
}

// The code's layout (codes.ts): version (1) | ticket id (16) | generation (2, BE) | step (4, BE) | Ed25519 signature (64).
const CODE_VERSION = 1;
const PAYLOAD_BYTES = 23;
const CODE_BYTES = PAYLOAD_BYTES + 64;

/** base64url to bytes, or null when it is not base64url. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** WebCrypto's key object (CryptoKey), named without the DOM's types: the shared package compiles for Node. */
type GateKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const uuidOf = (b: Uint8Array) => {
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/**
 * One gate's offline checker for one event. `check` is what the gate answers to a code scanned at `atMs`: well formed
 * and signed by the event's key (else INVALID: another event's code, or a forgery), of that step or the one before
 * (older: EXPIRED_CODE), a ticket in the manifest (else INVALID), not admitted before, here or by the store when
 * the manifest was made (else ALREADY_ADMITTED), ACTIVE (not listed, passed on, sold or cancelled) and of the
 * generation its holder's device has now (else REVOKED): the store's own order of checks (TicketService.scan). An ADMIT is remembered at once: the same ticket at this gate a second later is refused.
 */
export class OfflineGate {
  private readonly byId: Map<string, GateManifest['tickets'][number]>;
  private readonly admitted: Set<string>;

  private constructor(
    readonly manifest: GateManifest,
    private readonly key: GateKey,
    admitted: Iterable<string>,
  ) {
    this.byId = new Map(manifest.tickets.map((t) => [t.ticketId, t]));
    this.admitted = new Set(admitted);
  }

  /** `admitted`: the ticket ids this gate admitted itself since the manifest was made (kept across a reload). */
  static async open(manifest: GateManifest, admitted: Iterable<string> = []): Promise<OfflineGate> {
    const raw = fromBase64Url(manifest.publicKey);
    if (!raw || raw.length !== 32) throw new Error('the manifest has no Ed25519 public key');
    const key = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
    return new OfflineGate(manifest, key, admitted);
  }

  /** The ticket ids this gate has admitted (to keep with the pending scans). */
  admittedIds(): string[] {
    return [...this.admitted];
  }

  async check(code: string, atMs: number): Promise<GateCheck> {
    const refuse = (result: GateResult, reason: string, ticketId: string | null = null): GateCheck => ({
      result,
      ticketId,
      seat: (ticketId === null ? null : this.byId.get(ticketId)?.seat) ?? null,
      reason,
    });
    const bytes = fromBase64Url(code.trim());
    if (!bytes || bytes.length !== CODE_BYTES || bytes[0] !== CODE_VERSION) return refuse('INVALID', 'not a ticket code');
    const payload = bytes.subarray(0, PAYLOAD_BYTES);
    const signed = await crypto.subtle.verify('Ed25519', this.key, bytes.subarray(PAYLOAD_BYTES), payload);
    if (!signed) return refuse('INVALID', 'not signed for this event');
    const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    const ticketId = uuidOf(payload.subarray(1, 17));
    const generation = view.getUint16(17);
    const step = view.getUint32(19);
    const now = Math.floor(atMs / (this.manifest.stepSeconds * 1000));
    if (step > now) return refuse('INVALID', 'a code from the future: check the gate’s clock');
    if (step < now - 1) return refuse('EXPIRED_CODE', 'an old code (a screenshot?): ask for the live one', ticketId);
    const ticket = this.byId.get(ticketId);
    if (!ticket) return refuse('INVALID', 'no such ticket in the downloaded list', ticketId);
    // As the store's scan: admitted already reads ALREADY_ADMITTED whatever the device; else only an ACTIVE ticket of
    // the generation its holder's device has now gets in.
    if (ticket.status === 'ADMITTED' || this.admitted.has(ticketId)) return refuse('ALREADY_ADMITTED', 'already admitted', ticketId);
    if (ticket.status !== 'ACTIVE') return refuse('REVOKED', 'the ticket is listed for resale, passed on, sold or cancelled', ticketId);
    if (generation !== ticket.generation) return refuse('REVOKED', 'a code from a device the ticket has left', ticketId);
    this.admitted.add(ticketId);
    return { result: 'ADMIT', ticketId, seat: ticket.seat, reason: 'valid' };
  }
}
