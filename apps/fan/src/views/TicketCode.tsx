import { useEffect, useMemo, useState } from 'react';
import { encodeQR } from 'qr';
import { call, serverNow } from '../api';
import { refusalText, useFan } from '../context';
import { useNow } from '../poll';

/** GET /tickets/:id/code (ticketCodeSchema in @onsale/shared/tickets/schema). */
interface TicketCodeView {
  code: string;
  validFrom: string;
  validUntil: string;
  /** The next code is out then: fetch again. */
  refreshAt: string;
  generation: number;
}

/** One QR as an SVG path: a dark square per module, drawn from the encoder's matrix (no markup from a string). */
export function QrSvg({ text, label }: { text: string; label: string }) {
  const { path, size } = useMemo(() => {
    const rows = encodeQR(text, 'raw', { ecc: 'medium', border: 2 });
    let d = '';
    rows.forEach((row, y) => row.forEach((on, x) => on && (d += `M${x} ${y}h1v1h-1z`)));
    return { path: d, size: rows.length };
  }, [text]);
  return (
    <svg className="qr" viewBox={`0 0 ${size} ${size}`} role="img" aria-label={label} shapeRendering="crispEdges" data-testid="ticket-qr">
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}

/**
 * The ticket's current code as a QR: fetched from the store for this device, fetched again when its step ends (every
 * 15 s), so a screenshot stops working within the minute. A refusal (another device holds the ticket, not delivered
 * yet) is said in words, with the move to this device where that is what the fan can do.
 */
export default function TicketCode({ ticketId, onChanged }: { ticketId: string; onChanged: () => void }) {
  const { t, api } = useFan();
  const [code, setCode] = useState<TicketCodeView | null>(null);
  const [refusal, setRefusal] = useState<{ error: string; message: string } | null>(null);
  const [generation, setGeneration] = useState(0);
  const [moving, setMoving] = useState(false);
  const now = useNow(1000, serverNow);

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const r = await call<TicketCodeView>(api, 'GET', `/tickets/${encodeURIComponent(ticketId)}/code`);
      if (stop) return;
      if (r.kind === 'ok') {
        setCode(r.body);
        setRefusal(null);
        // Ask again when this step's code stops being the current one (at least a second from now).
        timer = setTimeout(() => void load(), Math.max(1000, Date.parse(r.body.refreshAt) - serverNow()));
      } else if (r.kind === 'refused') {
        setCode(null);
        setRefusal(r.body);
      } else timer = setTimeout(() => void load(), r.retryAfterSeconds * 1000);
    };
    void load();
    return () => {
      stop = true;
      if (timer) clearTimeout(timer);
    };
  }, [ticketId, generation]);

  async function moveHere() {
    setMoving(true);
    const r = await call(api, 'POST', `/tickets/${encodeURIComponent(ticketId)}/device`);
    setMoving(false);
    if (r.kind === 'ok') {
      setGeneration((g) => g + 1);
      onChanged();
    } else setRefusal(r.kind === 'refused' ? r.body : { error: 'BUSY', message: t.busy });
  }

  if (refusal)
    return (
      <div className="ticket-code-refused" data-testid="ticket-code-refused" data-code={refusal.error}>
        <p className="refusal" role="status">
          {refusalText(t, refusal)}
        </p>
        {refusal.error === 'TICKET_OTHER_DEVICE' && (
          <button type="button" className="secondary" disabled={moving} onClick={() => void moveHere()} data-testid="ticket-move-here">
            {t.ticketMoveHere}
          </button>
        )}
      </div>
    );
  if (!code)
    return (
      <p className="muted" role="status">
        {t.loading}
      </p>
    );
  const left = Math.max(0, Math.ceil((Date.parse(code.refreshAt) - now) / 1000));
  return (
    <div className="ticket-code" data-testid="ticket-code" data-code={code.code}>
      <QrSvg text={code.code} label={t.ticketQrLabel} />
      <p className="small muted" aria-hidden="true" data-testid="ticket-code-left">
        {t.ticketCodeChanges(left)}
      </p>
      <details className="small">
        <summary>{t.ticketCodeAsText}</summary>
        <code className="mono code-text" data-testid="ticket-code-text">
          {code.code}
        </code>
      </details>
    </div>
  );
}
