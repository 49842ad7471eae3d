import { useState, type ReactNode } from 'react';
import { CountCells } from './GridTable';
import { formatCount, formatDateTime } from './format';
import { accessText, OFFLINE_TITLE, PHASE_LOOK, type TierPanelRow } from './tiers/tier-rows';
import { CodesDialog, QueueDialog, RollDialog } from './tiers/TierDialogs';
import { QueueCells } from './tiers/QueueCells';
import './warroom/warroom.css';
import './event-form.css';

export type { TierPanelRow, TierQueue, TierRow } from './tiers/tier-rows';

/** What an operator can do to a tier from its row, each confirmed in a dialog. */
type TierAction = 'roll' | 'codes' | 'pause' | 'resume';

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
  const [open, setOpen] = useState<{ kind: TierAction; tier: TierPanelRow } | null>(null);
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
        <TierHeader showQueues={showQueues} actions={canRoll || canIssue || canControl} />
        <tbody>
          {tiers.map((t) => (
            <TierRowView key={t.code} tier={t} showQueues={showQueues}>
              {(canRoll || canIssue || canControl) && (
                <TierActions
                  tier={t}
                  canRoll={canRoll}
                  canIssue={canIssue}
                  canControl={canControl}
                  offline={offline}
                  onOpen={(kind) => setOpen({ kind, tier: t })}
                />
              )}
            </TierRowView>
          ))}
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

/** One tier's row: its window, access, share, counts and drift, where its unsold seats go, its queue, and `children` (its actions). */
function TierRowView({ tier: t, showQueues, children }: { tier: TierPanelRow; showQueues: boolean; children?: ReactNode }) {
  const look = PHASE_LOOK[t.phase];
  return (
    <tr data-testid="tier-row" data-tier={t.code} data-phase={t.phase} data-paused={t.queue ? String(t.queue.paused) : undefined}>
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
      <td className={`num${t.drift === 0 ? '' : ' check-fail'}`} data-testid="tier-drift" title="available + held + sold − capacity">
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
      {children}
    </tr>
  );
}

/** A tier's action buttons, as the operator's permissions and the tier's state allow; off (and saying why) while offline. */
function TierActions({
  tier: t,
  canRoll,
  canIssue,
  canControl,
  offline,
  onOpen,
}: {
  tier: TierPanelRow;
  canRoll: boolean;
  canIssue: boolean;
  canControl: boolean;
  offline: boolean;
  onOpen: (kind: TierAction) => void;
}) {
  // A rolled tier can roll again only if seats came back to it (a lapsed hold).
  const rollable = !t.general && (t.phase !== 'ROLLED' || t.available > 0);
  const button = (kind: TierAction, className: string, testId: string, label: string) => (
    <button
      type="button"
      className={className}
      onClick={() => onOpen(kind)}
      disabled={offline}
      title={offline ? OFFLINE_TITLE : undefined}
      data-testid={testId}
    >
      {label}
    </button>
  );
  return (
    <td className="tier-row-actions">
      <div>
        {canControl && !t.general && t.queue && !t.queue.paused && button('pause', 'wr-button wr-button-stop', 'tier-pause', 'Pause…')}
        {canControl && !t.general && t.queue?.paused && button('resume', 'wr-button wr-button-go', 'tier-resume', 'Resume…')}
        {canRoll && rollable && button('roll', 'wr-button', 'tier-roll-now', 'Roll forward now…')}
        {canIssue && t.access === 'ACCESS_CODE' && button('codes', 'wr-button', 'tier-issue-codes', 'Issue codes…')}
      </div>
    </td>
  );
}

/** The tiers table's header: the queue's columns when the rows carry queues, and Actions when the operator may act. */
function TierHeader({ showQueues, actions }: { showQueues: boolean; actions: boolean }) {
  return (
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
        {actions && <th>Actions</th>}
      </tr>
    </thead>
  );
}
