import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { OfflineGate, type GateResult, type GateSeat } from '@onsale/shared/tickets/gate';
import { messageOf, useTRPC } from '../../../../trpc';
import { EventLinks } from '../../../-components/EventLinks';
import { Forbidden } from '../../../-components/Status';
import { Camera, hasCamera } from '../../../-components/scanner/Camera';
import { loadGate, saveGate, type GateState } from '../../../-components/scanner/gate-store';
import '../../../-components/scanner/scanner.css';

// The door: a gate's page. Online, each code goes to the store's own check (POST /scan's, with this gate's scanner
// credential), which admits a ticket once whatever the number of gates. Offline (no network, or the operator says
// so), the gate checks codes against the manifest it downloaded and keeps the scans; back online it uploads them and
// lists the double entries the store found. Camera where the browser has one; a typed or pasted code always.
export const Route = createFileRoute('/_authed/events/$eventId_/scanner')({
  component: ScannerPage,
});

interface ScanLine {
  id: string;
  at: number;
  result: GateResult;
  seat: GateSeat | null;
  detail: string;
  offline: boolean;
}

const WORDS: Record<GateResult, { title: string; tone: 'ok' | 'warn' | 'alarm' }> = {
  ADMIT: { title: 'Admit', tone: 'ok' },
  ALREADY_ADMITTED: { title: 'Already admitted: do not let in', tone: 'alarm' },
  EXPIRED_CODE: { title: 'Old code: ask for the live one on the fan’s phone', tone: 'warn' },
  INVALID: { title: 'Not a ticket for this event', tone: 'alarm' },
  REVOKED: { title: 'Ticket no longer valid (passed on, sold or moved to another phone)', tone: 'alarm' },
};

const seatWords = (s: GateSeat | null) =>
  !s
    ? ''
    : s.row !== null && s.number !== null
      ? `Section ${s.section}, row ${s.row}, seat ${s.number}`
      : `${s.section} (general admission)`;
const timeOf = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function ScannerPage() {
  const { me } = Route.useRouteContext();
  const { eventId } = Route.useParams();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const allowed = me.permissions.includes('tickets.scan');
  // Door staff read no event pages: the event's name comes from the doors they may set up.
  const doors = useQuery(trpc.tickets.doorEvents.queryOptions(undefined, { enabled: allowed }));
  const event = doors.data?.find((e) => e.id === eventId);
  const [gate, setGateState] = useState<GateState>(() => loadGate(eventId));
  const setGate = (next: GateState | ((g: GateState) => GateState)) =>
    setGateState((g) => {
      const v = typeof next === 'function' ? next(g) : next;
      saveGate(eventId, v);
      return v;
    });
  const [gateName, setGateName] = useState(gate.gate);
  const [forcedOffline, setForcedOffline] = useState(false);
  const [networkDown, setNetworkDown] = useState(typeof navigator !== 'undefined' && !navigator.onLine);
  const [code, setCode] = useState('');
  const [lines, setLines] = useState<ScanLine[]>([]);
  const [camera, setCamera] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [report, setReport] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const offline = forcedOffline || networkDown;

  const createScanner = useMutation(trpc.tickets.createScanner.mutationOptions());
  const scan = useMutation(trpc.tickets.scan.mutationOptions());
  const [downloading, setDownloading] = useState(false);
  const upload = useMutation(trpc.tickets.upload.mutationOptions());

  useEffect(() => {
    const on = () => setNetworkDown(false);
    const off = () => setNetworkDown(true);
    addEventListener('online', on);
    addEventListener('offline', off);
    return () => {
      removeEventListener('online', on);
      removeEventListener('offline', off);
    };
  }, []);

  // Back online with scans waiting: upload them (the store counts a scan sent twice once, by its scanId).
  useEffect(() => {
    if (!offline && gate.token && gate.pending.length > 0 && !upload.isPending) void sendPending();
  }, [offline, gate.pending.length, gate.token]);

  if (!allowed) return <Forbidden what="page (the door scanner is for door staff, operators and admins)" />;

  async function startGate(e: FormEvent) {
    e.preventDefault();
    const name = gateName.trim() || 'Gate 1';
    try {
      const s = await createScanner.mutateAsync({ eventId, name });
      setGate((g) => ({ ...g, gate: name, token: s.token }));
      setProblem(null);
      input.current?.focus();
    } catch (err) {
      setProblem(messageOf(err, { change: true }));
    }
  }

  function record(line: Omit<ScanLine, 'id' | 'at'>) {
    setLines((all) => [{ ...line, id: crypto.randomUUID(), at: Date.now() }, ...all].slice(0, 50));
  }

  async function checkOffline(text: string) {
    if (!gate.manifest) {
      setProblem('No connection and no ticket list on this device: download the list while online to check codes offline.');
      return;
    }
    const g = await OfflineGate.open(gate.manifest, gate.admittedOffline);
    const r = await g.check(text, Date.now());
    const scanned = {
      scanId: crypto.randomUUID(),
      code: text,
      scannedAt: new Date().toISOString(),
      result: r.result,
      ticketId: r.ticketId,
    };
    setGate((s) => ({ ...s, admittedOffline: g.admittedIds(), pending: [...s.pending, scanned] }));
    record({ result: r.result, seat: r.seat, detail: `${r.reason}; kept to upload`, offline: true });
  }

  async function check(text: string) {
    const value = text.trim();
    if (!value) return;
    setProblem(null);
    setCode('');
    if (offline || !gate.token) return checkOffline(value);
    try {
      const a = await scan.mutateAsync({ scannerToken: gate.token, code: value, gate: gate.gate });
      const first = a.firstAdmitted ? `first admitted ${timeOf(a.firstAdmitted.at)} at ${a.firstAdmitted.gate}` : '';
      record({ result: a.result, seat: a.seat, detail: first, offline: false });
    } catch (err) {
      // No answer at all: the network is gone. Check this code against the downloaded list instead.
      if ((err as { data?: { httpStatus?: number } }).data?.httpStatus === undefined) {
        setNetworkDown(true);
        return checkOffline(value);
      }
      setProblem(messageOf(err));
    } finally {
      input.current?.focus();
    }
  }

  async function download() {
    if (!gate.token) return;
    setDownloading(true);
    try {
      const m = await queryClient.fetchQuery({ ...trpc.tickets.manifest.queryOptions({ scannerToken: gate.token }), staleTime: 0 });
      // A fresh list knows every admission up to now: the gate's own offline admissions are in it once uploaded.
      setGate((g) => ({ ...g, manifest: m, admittedOffline: g.pending.length ? g.admittedOffline : [] }));
      setProblem(null);
    } catch (err) {
      setProblem(messageOf(err));
    } finally {
      setDownloading(false);
    }
  }

  async function sendPending() {
    if (!gate.token || gate.pending.length === 0) return;
    const scans = gate.pending.map(({ scanId, code: c, scannedAt }) => ({ scanId, code: c, scannedAt }));
    try {
      const r = await upload.mutateAsync({ scannerToken: gate.token, gate: gate.gate, scans });
      const sent = new Set(scans.map((s) => s.scanId));
      setGate((g) => ({ ...g, pending: g.pending.filter((p) => !sent.has(p.scanId)) }));
      const doubles = r.results.filter((x) => x.doubleEntry);
      setReport(
        `Uploaded ${r.accepted + r.repeated} scan${r.accepted + r.repeated === 1 ? '' : 's'} made offline.` +
          (doubles.length === 0
            ? ' No double entries.'
            : ` ${doubles.length} double entr${doubles.length === 1 ? 'y' : 'ies'}: ` +
              doubles
                .map(
                  (d) =>
                    `ticket ${d.ticketId?.slice(0, 8) ?? '?'}${d.firstAdmitted ? ` (first in ${timeOf(d.firstAdmitted.at)} at ${d.firstAdmitted.gate})` : ''}`,
                )
                .join('; ') +
              '.'),
      );
    } catch (err) {
      if ((err as { data?: { httpStatus?: number } }).data?.httpStatus === undefined) setNetworkDown(true);
      else setProblem(messageOf(err));
    }
  }

  const latest = lines[0];
  return (
    <section className="scanner">
      <p className="crumbs">
        <Link to="/door">Doors</Link> / {event?.name ?? 'Event'} / Door scanner
      </p>
      <h1>Door scanner{event ? `: ${event.name}` : ''}</h1>
      {me.permissions.includes('events.read') && <EventLinks eventId={eventId} />}

      {!gate.token ? (
        <form className="card form scanner-start" onSubmit={(e) => void startGate(e)} data-testid="scanner-start">
          <p>
            Each gate scans with its own credential, for this event only. Name this gate (it is shown in the log and beside double entries),
            then start.
          </p>
          <label className="field">
            <span>Gate name</span>
            <input value={gateName} onChange={(e) => setGateName(e.target.value)} maxLength={64} data-testid="scanner-gate-name" />
          </label>
          <button type="submit" disabled={createScanner.isPending} data-testid="scanner-start-button">
            Start scanning at this gate
          </button>
        </form>
      ) : (
        <>
          <div className="scanner-status" data-testid="scanner-status" data-offline={offline ? 'true' : 'false'}>
            <span className={`pill ${offline ? 'pill-warn' : 'pill-ok'}`}>{offline ? 'Offline: checking against the list' : 'Online'}</span>
            <span>{gate.gate}</span>
            <span className="muted" data-testid="scanner-manifest">
              {gate.manifest
                ? `Ticket list: ${gate.manifest.tickets.length} tickets, downloaded ${timeOf(gate.manifest.generatedAt)}`
                : 'No ticket list downloaded: download one before the doors open, in case the network goes.'}
            </span>
            {gate.pending.length > 0 && (
              <span className="pill pill-warn" data-testid="scanner-pending">
                {gate.pending.length} scan{gate.pending.length === 1 ? '' : 's'} to upload
              </span>
            )}
          </div>
          <div className="scanner-tools">
            <button
              type="button"
              className="tool-button"
              onClick={() => void download()}
              disabled={offline || downloading}
              data-testid="scanner-download"
            >
              {gate.manifest ? 'Download the ticket list again' : 'Download the ticket list for offline use'}
            </button>
            <label className="check">
              <input
                type="checkbox"
                checked={forcedOffline}
                onChange={(e) => setForcedOffline(e.target.checked)}
                data-testid="scanner-offline"
              />
              Work offline
            </label>
            {gate.pending.length > 0 && !offline && (
              <button
                type="button"
                className="tool-button"
                onClick={() => void sendPending()}
                disabled={upload.isPending}
                data-testid="scanner-upload"
              >
                Upload now
              </button>
            )}
          </div>

          <form className="scanner-form" onSubmit={(e) => (e.preventDefault(), void check(code))} data-testid="scanner-form">
            <label className="field">
              <span>Ticket code (scan, type or paste)</span>
              <input
                ref={input}
                value={code}
                onChange={(e) => setCode(e.target.value)}
                autoComplete="off"
                autoCapitalize="off"
                spellCheck={false}
                autoFocus
                data-testid="scanner-code"
              />
            </label>
            <button type="submit" disabled={scan.isPending} data-testid="scanner-check">
              Check
            </button>
            {hasCamera() && (
              <button
                type="button"
                className="tool-button"
                onClick={() => setCamera((c) => !c)}
                aria-pressed={camera}
                data-testid="scanner-camera-toggle"
              >
                {camera ? 'Stop the camera' : 'Use the camera'}
              </button>
            )}
          </form>
          {camera && <Camera onCode={(c) => void check(c)} onError={(m) => (setCamera(false), setProblem(m))} />}
        </>
      )}

      {problem && (
        <p className="form-error" role="alert" data-testid="scanner-problem">
          {problem}
        </p>
      )}
      {report && (
        <p className="notice" role="status" data-testid="scanner-report">
          {report}
        </p>
      )}
      <div aria-live="assertive" aria-atomic="true">
        {latest && (
          <div className={`scan-result scan-${WORDS[latest.result].tone}`} data-testid="scan-result" data-result={latest.result}>
            <strong>{WORDS[latest.result].title}</strong>
            {latest.seat && <span>{seatWords(latest.seat)}</span>}
            {latest.detail && <span className="scan-detail">{latest.detail}</span>}
          </div>
        )}
      </div>
      {lines.length > 1 && (
        <>
          <h2>Earlier scans at this gate</h2>
          <ol className="scan-log" data-testid="scan-log">
            {lines.slice(1).map((l) => (
              <li key={l.id} data-result={l.result}>
                <span className={`pill pill-${WORDS[l.result].tone}`}>{l.result.replace('_', ' ').toLowerCase()}</span>{' '}
                {new Date(l.at).toLocaleTimeString()} {seatWords(l.seat)} {l.offline ? '(offline)' : ''}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
