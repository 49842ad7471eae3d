import { useState } from 'react';
import { CountCells } from './GridTable';
import { formatCount, formatDateTime } from './format';
import { accessText, OFFLINE_TITLE, PHASE_LOOK, type TierPanelRow } from './tiers/tier-rows';
import { CodesDialog, QueueDialog, RollDialog } from './tiers/TierDialogs';
import { QueueCells } from './tiers/QueueCells';
import './warroom/warroom.css';
import './event-form.css';

export type { TierPanelRow, TierQueue, TierRow } from './tiers/tier-rows';

/**
 * The event's presale tiers: each one's window, access rule, share and live counts (available + held + sold =
 * capacity, drift 0), where its unsold seats go and when, and, for the roles allowed, rolling a tier forward now
 * and issuing its access codes (each confirmed in a dialog; the BFF checks the role again and audits).
 */
export function TiersPanel({
  eventId,
  eventName,
  tiers,
  permissions,
  onChanged,
  offline = false,
}: {
  eventId: string;
  eventName: string;
  tiers: TierPanelRow[];
  permissions: readonly string[];
  onChanged?: () => void;
  /** The server cannot be reached (the war room knows): the controls are off and say why. */
  offline?: boolean;
}) {
  const [open, setOpen] = useState<{ kind: 'roll' | 'codes' | 'pause' | 'resume'; tier: TierPanelRow } | null>(null);
  if (tiers.length === 0) return null;
  const canRoll = permissions.includes('tiers.roll');
  const canIssue = permissions.includes('tiers.codes');
  // The war room's rows carry each tier's queue; pausing one needs the same permission as the event's pause button.
  const showQueues = tiers.some((t) => t.queue !== undefined);
  const canControl = showQueues && permissions.includes('warroom.control');
  return (
    <section className="tiers-panel" data-testid="tiers-panel" aria-label="Presale tiers">
      <h2>Presale tiers</h2>
      <table className="grid tiers-table" data-testid="tiers-table">
        <thead>
          <tr>
            <th>Tier</th>
            <th>Access</th>
            <th>Window</th>
            <th className="num">Share</th>
            <th className="num">Capacity</th>
            <th className="num">Available</th>
            <th className="num">Held</th>
            <th className="num">Sold</th>
            <th className="num" title="Inventory invariant drift: available + held + sold − capacity, which must stay 0">
              Unaccounted seats
            </th>
            <th>Unsold seats</th>
            {showQueues && (
              <>
                <th>Queue</th>
                <th className="num" title="joined − admitted">
                  Waiting
                </th>
                <th className="num" title="Watermark (admitted-through): every position at or below it is admitted">
                  Let in up to place
                </th>
                <th className="num">Rate / min</th>
                <th>Controller</th>
              </>
            )}
            {(canRoll || canIssue || canControl) && <th>Actions</th>}
          </tr>
        </thead>
        <tbody>
          {tiers.map((t) => {
            const look = PHASE_LOOK[t.phase];
            // A rolled tier can roll again only if seats came back to it (a lapsed hold).
            const rollable = !t.general && (t.phase !== 'ROLLED' || t.available > 0);
            return (
              <tr
                key={t.code}
                data-testid="tier-row"
                data-tier={t.code}
                data-phase={t.phase}
                data-paused={t.queue ? String(t.queue.paused) : undefined}
              >
                <td>
                  <strong>{t.code}</strong> <span className="muted">{t.name}</span>
                  <br />
                  <span className={`wr-badge ${look.tone}`} data-testid="tier-phase">
                    {t.general ? (t.phase === 'SELLING' ? 'GENERAL SALE' : 'GENERAL SALE, NOT OPEN') : look.label}
                  </span>
                </td>
                <td data-testid="tier-access">{accessText(t)}</td>
                <td data-testid="tier-window">
                  {t.general ? (
                    <>
                      from <time dateTime={t.opensAt}>{formatDateTime(t.opensAt)}</time> (the on-sale)
                    </>
                  ) : (
                    <>
                      <time dateTime={t.opensAt}>{formatDateTime(t.opensAt)}</time> to{' '}
                      <time dateTime={t.closesAt ?? ''}>{t.closesAt ? formatDateTime(t.closesAt) : '—'}</time>
                    </>
                  )}
                </td>
                <td className="num">{t.share === null ? 'the rest' : `${Math.round(t.share * 1000) / 10}%`}</td>
                <CountCells prefix="tier" of={t} />
                <td
                  className={`num${t.drift === 0 ? '' : ' check-fail'}`}
                  data-testid="tier-drift"
                  title="available + held + sold − capacity"
                >
                  {formatCount(t.drift)}
                </td>
                <td data-testid="tier-roll">
                  {t.general ? (
                    '—'
                  ) : t.rolledAt ? (
                    <>
                      rolled into {t.rollsInto} at <time dateTime={t.rolledAt}>{formatDateTime(t.rolledAt)}</time>
                    </>
                  ) : (
                    <>
                      roll into {t.rollsInto} at{' '}
                      <time dateTime={t.rollsForwardAt ?? ''}>{t.rollsForwardAt ? formatDateTime(t.rollsForwardAt) : '—'}</time>
                    </>
                  )}
                </td>
                {showQueues && <QueueCells queue={t.queue ?? null} />}
                {(canRoll || canIssue || canControl) && (
                  <td className="tier-row-actions">
                    <div>
                      {canControl && !t.general && t.queue && !t.queue.paused && (
                        <button
                          type="button"
                          className="wr-button wr-button-stop"
                          onClick={() => setOpen({ kind: 'pause', tier: t })}
                          disabled={offline}
                          title={offline ? OFFLINE_TITLE : undefined}
                          data-testid="tier-pause"
                        >
                          Pause…
                        </button>
                      )}
                      {canControl && !t.general && t.queue?.paused && (
                        <button
                          type="button"
                          className="wr-button wr-button-go"
                          onClick={() => setOpen({ kind: 'resume', tier: t })}
                          disabled={offline}
                          title={offline ? OFFLINE_TITLE : undefined}
                          data-testid="tier-resume"
                        >
                          Resume…
                        </button>
                      )}
                      {canRoll && rollable && (
                        <button
                          type="button"
                          className="wr-button"
                          onClick={() => setOpen({ kind: 'roll', tier: t })}
                          disabled={offline}
                          title={offline ? OFFLINE_TITLE : undefined}
                          data-testid="tier-roll-now"
                        >
                          Roll forward now…
                        </button>
                      )}
                      {canIssue && t.access === 'ACCESS_CODE' && (
                        <button
                          type="button"
                          className="wr-button"
                          onClick={() => setOpen({ kind: 'codes', tier: t })}
                          disabled={offline}
                          title={offline ? OFFLINE_TITLE : undefined}
                          data-testid="tier-issue-codes"
                        >
                          Issue codes…
                        </button>
                      )}
                    </div>
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      {offline && (canRoll || canIssue || canControl) && (
        <p className="wr-controls-offline" role="status" data-testid="tiers-offline">
          {OFFLINE_TITLE}
        </p>
      )}
      {open?.kind === 'roll' && !offline && (
        <RollDialog
          eventId={eventId}
          eventName={eventName}
          tier={open.tier}
          onClose={() => setOpen(null)}
          onDone={() => {
            setOpen(null);
            onChanged?.();
          }}
        />
      )}
      {open?.kind === 'codes' && !offline && <CodesDialog eventId={eventId} tier={open.tier} onClose={() => setOpen(null)} />}
      {(open?.kind === 'pause' || open?.kind === 'resume') && open.tier.queue && !offline && (
        <QueueDialog
          kind={open.kind}
          eventId={eventId}
          tier={open.tier}
          queue={open.tier.queue}
          onClose={() => setOpen(null)}
          onDone={() => {
            setOpen(null);
            onChanged?.();
          }}
        />
      )}
    </section>
  );
}
