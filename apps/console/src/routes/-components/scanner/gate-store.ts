import type { GateManifest, OfflineScan } from '@onsale/shared/tickets/gate';

// What a gate keeps in this browser, per event: its scanner credential, the manifest it downloaded for offline use,
// the tickets it admitted offline since, and the scans it has not uploaded yet. localStorage survives a reload or a
// browser restart at the door; nothing here is lost until the store has acknowledged the upload.
export interface GateState {
  gate: string;
  token: string | null;
  manifest: GateManifest | null;
  /** Ticket ids this gate admitted offline since the manifest was made. */
  admittedOffline: string[];
  pending: OfflineScan[];
}

const keyOf = (eventId: string) => `onsale.gate.${eventId}`;

export function loadGate(eventId: string): GateState {
  try {
    const raw = localStorage.getItem(keyOf(eventId));
    if (raw) return { admittedOffline: [], pending: [], ...(JSON.parse(raw) as Partial<GateState>) } as GateState;
  } catch {
    // Storage unreadable: start afresh (nothing was kept).
  }
  return { gate: 'Gate 1', token: null, manifest: null, admittedOffline: [], pending: [] };
}

export function saveGate(eventId: string, s: GateState): void {
  try {
    localStorage.setItem(keyOf(eventId), JSON.stringify(s));
  } catch {
    // A full store: the page keeps working; the scans stay in memory until uploaded.
  }
}
