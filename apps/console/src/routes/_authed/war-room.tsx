import { useMemo, useState } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useSubscription } from '@trpc/tanstack-react-query';
import type { WarRoomTile as Tile } from '@onsale/shared/warroom';
import { alertReachOf } from '@onsale/shared/warroom/schema';
import { formatMoney } from '@onsale/shared/words';
import { useTRPC } from '../../trpc';
import { formatCount } from '../-components/format';
import { formatRate, formatTime, LinkBanner, LiveArea, STATE_LOOK } from '../-components/warroom/parts';
import { useLinkState } from '../-components/warroom/useLiveStream';

/**
 * Every event on sale today or now, one compact tile each, over one stream (a busy Saturday opens 40 on-sales at
 * 10:00, and each would otherwise hold a stream of its own). "Today" is the operator's own day. Tiles keep their
 * order (by on-sale time) so nothing jumps; alerts and pauses colour the tile and are counted at the top.
 */
export const Route = createFileRoute('/_authed/war-room')({
  component: BoardPage,
});

function BoardPage() {
  const trpc = useTRPC();
  const timeZone = useMemo(() => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC', []);
  const [board, setBoard] = useState<{ at: string; tiles: Tile[] } | null>(null);
  const [last, setLast] = useState<{ receivedAt: number; unavailable: boolean } | null>(null);
  const sub = useSubscription(
    trpc.warRoom.board.subscriptionOptions(
      { timeZone },
      {
        onData: (m) => {
          setLast({ receivedAt: Date.now(), unavailable: m.type === 'unavailable' });
          if (m.type === 'board') setBoard({ at: m.at, tiles: m.tiles });
        },
      },
    ),
  );
  const link = useLinkState(sub, last);
  const tiles = board?.tiles ?? [];
  const paused = tiles.filter((t) => t.state === 'PAUSED' || t.state === 'FAILED_CLOSED').length;
  const critical = tiles.filter((t) => t.alerts.critical > 0).length;
  const admitted = tiles.reduce((a, t) => a + t.admittedLastMinute, 0);
  const payments = tiles.reduce((a, t) => a + t.paymentAttemptsPerSecond, 0);
  // Money adds up only within a currency: one total per currency on the board.
  const gross = new Map<string, number>();
  for (const t of tiles) gross.set(t.sales.currency, (gross.get(t.sales.currency) ?? 0) + t.sales.grossCents);

  return (
    <section className="wr">
      <h1>War room: all on-sales</h1>
      <p className="muted">Every event on sale today ({timeZone}) or on sale now, updated every 2 seconds. Open a tile for its war room.</p>
      <LinkBanner state={link.state} receivedAt={link.receivedAt} at={board?.at ?? null} />
      <LiveArea live={link.state === 'live'}>
        <div className="wr-board-summary" data-testid="board-summary">
          <span>
            <strong data-testid="board-count">{tiles.length}</strong> on-sales
          </span>
          <span className={paused > 0 ? 'wr-summary-alarm' : ''}>
            <strong data-testid="board-paused">{paused}</strong> paused
          </span>
          <span className={critical > 0 ? 'wr-summary-alarm' : ''}>
            <strong data-testid="board-critical">{critical}</strong> with critical alerts
          </span>
          <span>
            <strong>{formatCount(admitted)}</strong> admitted last minute
          </span>
          <span>
            <strong>{formatRate(payments)}</strong> payments a second
          </span>
          <span data-testid="board-gross">
            <strong>
              {gross.size === 0
                ? 'Nothing'
                : [...gross]
                    .sort(([a], [b]) => a.localeCompare(b))
                    .map(([currency, cents]) => formatMoney(cents, currency))
                    .join(' + ')}
            </strong>{' '}
            gross sales
          </span>
        </div>
        {board && tiles.length === 0 && (
          <p className="muted" data-testid="board-empty">
            Nothing on sale today.
          </p>
        )}
        <ul className="wr-board" data-testid="board">
          {tiles.map((t) => (
            <BoardTile key={t.eventId} t={t} />
          ))}
        </ul>
      </LiveArea>
    </section>
  );
}

function BoardTile({ t }: { t: Tile }) {
  const look = STATE_LOOK[t.state];
  const pct = (n: number) => (t.capacity > 0 ? `${(n / t.capacity) * 100}%` : '0%');
  const tone = t.alerts.critical > 0 ? 'critical' : t.alerts.warning > 0 ? 'warning' : 'ok';
  return (
    <li
      className={`wr-tile wr-tile-${tone} wr-tile-state-${look.tone}`}
      data-testid="board-tile"
      data-event-id={t.eventId}
      data-state={t.state}
    >
      <Link to="/events/$eventId/war-room" params={{ eventId: t.eventId }} className="wr-tile-link">
        <span className="wr-tile-head">
          <span className="wr-tile-name">{t.name}</span>
          <span className={`wr-badge wr-badge-${look.tone}`} data-testid="board-tile-state">
            {look.label}
          </span>
        </span>
        <span className="wr-tile-sub muted">
          {t.venueName} · {Date.parse(t.onsaleAt) <= Date.now() ? 'opened' : 'opens'}{' '}
          <span data-testid="board-tile-open">{formatTime(t.onsaleAt).slice(0, 5)}</span>
        </span>
        {t.awaitingSignOff && (
          <span className="wr-tile-alert wr-tile-alert-critical" data-testid="board-tile-signoff">
            Fairness not signed off: {Date.parse(t.onsaleAt) <= Date.now() ? 'the sale has not opened' : 'it will not open at its time'}
          </span>
        )}
        <span className="wr-tile-figures">
          <span>
            <b>{formatCount(t.waiting)}</b> waiting
          </span>
          <span>
            <b>{formatCount(t.admittedLastMinute)}</b>/
            {t.rateOverridePerMin !== null
              ? formatCount(t.rateOverridePerMin)
              : t.planAdmitsPerMin === null
                ? '—'
                : formatRate(t.planAdmitsPerMin)}{' '}
            let in a minute
          </span>
          {t.drift !== 0 && (
            <span className="wr-summary-alarm" title="Inventory invariant drift">
              {formatCount(t.drift)} seats unaccounted for
            </span>
          )}
        </span>
        <span className="wr-tile-money" data-testid="board-tile-revenue">
          <b>{formatMoney(t.sales.grossCents, t.sales.currency)}</b> · {formatCount(t.sales.orders)} order{t.sales.orders === 1 ? '' : 's'}
          {t.sales.averageOrderCents !== null && <> · average {formatMoney(t.sales.averageOrderCents, t.sales.currency)}</>} ·{' '}
          {formatMoney(t.sales.grossLastMinuteCents, t.sales.currency)} last minute
        </span>
        <span className="wr-bar" aria-label={`${t.sold} sold, ${t.held} held, ${t.available} available of ${t.capacity}`}>
          <span className="wr-bar-sold" style={{ width: pct(t.sold) }} />
          <span className="wr-bar-held" style={{ width: pct(t.held) }} />
        </span>
        <span className="wr-tile-sub">
          {formatCount(t.sold)} sold · {formatCount(t.held)} held · {formatCount(t.available)} left
        </span>
        {t.state === 'PAUSED' && t.pausedReason && (
          <span className="wr-tile-alert" data-testid="board-tile-paused">
            Paused by {t.pausedBy}: {t.pausedReason}
          </span>
        )}
        {t.alerts.top && (
          <span className={`wr-tile-alert wr-tile-alert-${t.alerts.top.severity}`} data-testid="board-tile-alert">
            {alertReachOf(t.alerts.top.code) === 'platform' ? 'Every event: ' : ''}
            {t.alerts.top.title}
            {t.alerts.critical + t.alerts.warning > 1 ? ` (+${t.alerts.critical + t.alerts.warning - 1})` : ''}
          </span>
        )}
      </Link>
    </li>
  );
}
