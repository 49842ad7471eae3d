import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { RouterOutputs } from '@onsale/bff/root';
import { fieldErrors } from '@onsale/shared/users/schema';
import { ACCESS_CODES_MAX, accessCodesSchema, pauseQueueSchema, resumeQueueSchema, tierRollSchema } from '@onsale/shared/warroom/schema';
import { useTRPC } from '../../trpc';
import { ConfirmActions, errorsOf, ModalDialog, ReasonField } from './warroom/dialog';
import { downloadText } from './download';
import { Field } from './Field';
import { CountCells } from './GridTable';
import { formatCount, formatDateTime } from './format';
import { ACCESS_LABELS } from './TiersEditor';
import './warroom/warroom.css';
import './event-form.css';

/** A tier as the BFF sends it (the event page's and the war room's are the same shape). */
export type TierRow = RouterOutputs['events']['byId']['tiers'][number];
/** A tier's queue figures, as the war-room snapshot carries them (the event page has none). */
export type TierQueue = NonNullable<RouterOutputs['warRoom']['snapshot']['tiers'][number]['queue']>;
/** A tier row, with its queue's figures on the war room. */
export type TierPanelRow = TierRow & { queue?: TierQueue | null };

const PHASE_LOOK: Record<TierRow['phase'], { label: string; tone: string }> = {
  UPCOMING: { label: 'NOT OPEN', tone: '' },
  SELLING: { label: 'SELLING', tone: 'wr-badge-ok' },
  CLOSED: { label: 'CLOSED, ROLL DUE', tone: 'wr-badge-warn' },
  ROLLED: { label: 'ROLLED FORWARD', tone: 'wr-badge-done' },
};

const accessText = (t: TierRow) =>
  t.access === 'CARD_BIN' && t.binRanges
    ? `${ACCESS_LABELS.CARD_BIN}: ${t.binRanges.map((r) => (r.from === r.to ? r.from : `${r.from}–${r.to}`)).join(', ')}`
    : ACCESS_LABELS[t.access];

const OFFLINE_TITLE = 'Cannot reach the server: the tier controls are off until it answers again.';

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
            <th className="num">Drift</th>
            <th>Unsold seats</th>
            {showQueues && (
              <>
                <th>Queue</th>
                <th className="num" title="joined − admitted">
                  Waiting
                </th>
                <th className="num" title="every position at or below it is admitted">
                  Watermark
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

/** One tier's queue figures: a PAUSED badge with who, why and when; waiting, watermark, rate and the controller's heartbeat. */
function QueueCells({ queue: q }: { queue: TierQueue | null }) {
  if (!q)
    return (
      <td colSpan={5} className="muted" data-testid="tier-queue">
        no queue row
      </td>
    );
  return (
    <>
      <td data-testid="tier-queue">
        {q.paused ? (
          <>
            <span className="wr-badge wr-badge-alarm" data-testid="tier-paused">
              PAUSED
            </span>
            <br />
            <span className="muted" data-testid="tier-paused-by">
              by {q.pausedBy ?? 'unknown'}
              {q.pausedAt && (
                <>
                  {' '}
                  at <time dateTime={q.pausedAt}>{formatDateTime(q.pausedAt)}</time>
                </>
              )}
              : “{q.pausedReason ?? 'no reason recorded'}”
            </span>
          </>
        ) : (
          <span className="wr-badge">RUNNING</span>
        )}
      </td>
      <td className="num" data-testid="tier-waiting" title={`${formatCount(q.joined)} joined − ${formatCount(q.admittedThrough)} admitted`}>
        {formatCount(q.waiting)}
        <br />
        <span className="muted">of {formatCount(q.joined)} joined</span>
      </td>
      <td className="num" data-testid="tier-watermark">
        {formatCount(q.admittedThrough)}
      </td>
      <td className="num" data-testid="tier-rate">
        {formatCount(Math.round(q.publishedRatePerMin))}
        {q.rateOverridePerMin !== null && (
          <>
            <br />
            <span className="muted">override {formatCount(q.rateOverridePerMin)}</span>
          </>
        )}
      </td>
      <td data-testid="tier-heartbeat" data-fresh={String(q.heartbeatFresh)}>
        <span className={`wr-badge ${q.heartbeatFresh ? 'wr-badge-ok' : 'wr-badge-warn'}`}>{q.heartbeatFresh ? 'FRESH' : 'STALE'}</span>
        <br />
        <span className="muted">{q.heartbeatAgeSeconds === null ? 'no heartbeat yet' : `${q.heartbeatAgeSeconds} s ago`}</span>
      </td>
    </>
  );
}

function RollDialog({
  eventId,
  eventName,
  tier,
  onClose,
  onDone,
}: {
  eventId: string;
  eventName: string;
  tier: TierRow;
  onClose: () => void;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const roll = useMutation(trpc.tiers.roll.mutationOptions({ onSuccess: onDone, onError: (e) => setErrors(errorsOf(e)) }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const parsed = tierRollSchema.safeParse({ eventId, tier: tier.code, reason });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    roll.mutate(parsed.data);
  }

  return (
    <ModalDialog testId="tier-dialog-roll" title={`Roll ${tier.name} forward now`} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <p>
          The {formatCount(tier.available)} unsold seats of <strong>{tier.name}</strong> ({tier.code}) move to{' '}
          <strong>{tier.rollsInto}</strong> now, in one step, instead of{' '}
          {tier.rollsForwardAt ? `at ${formatDateTime(tier.rollsForwardAt)}` : 'at its roll time'}; the waitlist of {eventName} hears of
          them.
          {tier.held > 0 &&
            ` The ${formatCount(tier.held)} seats held now stay with their holds; if they come back, the next roll moves them.`}{' '}
          The {tier.name} presale closes to new fans.
        </p>
        <ReasonField label="Reason (goes to the audit log)" value={reason} onChange={setReason} error={errors.reason} />
        <ConfirmActions
          error={errors.form ?? errors.tier}
          pending={roll.isPending}
          onClose={onClose}
          confirm={{ label: 'Roll forward now', className: 'wr-button-stop', testId: 'tier-confirm-roll' }}
        />
      </form>
    </ModalDialog>
  );
}

function CodesDialog({ eventId, tier, onClose }: { eventId: string; tier: TierRow; onClose: () => void }) {
  const trpc = useTRPC();
  const [count, setCount] = useState('10');
  const [accountId, setAccountId] = useState('');
  const [validUntil, setValidUntil] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const issue = useMutation(
    trpc.tiers.issueCodes.mutationOptions({ onSuccess: () => setErrors({}), onError: (e) => setErrors(errorsOf(e)) }),
  );
  const issued = issue.data;

  function submit(e: FormEvent) {
    e.preventDefault();
    const until = validUntil.trim() === '' ? undefined : new Date(validUntil);
    const parsed = accessCodesSchema.safeParse({
      eventId,
      tier: tier.code,
      count: count.trim() === '' ? Number.NaN : Number(count),
      ...(accountId.trim() === '' ? {} : { accountId: accountId.trim() }),
      ...(until === undefined ? {} : { validUntil: Number.isNaN(until.getTime()) ? validUntil : until.toISOString() }),
    });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    issue.mutate(parsed.data);
  }

  return (
    <ModalDialog testId="tier-dialog-codes" title={`Access codes for ${tier.name}`} onClose={onClose}>
      {issued ? (
        <>
          <p role="status" data-testid="codes-issued">
            {formatCount(issued.codes.length)} code{issued.codes.length === 1 ? '' : 's'} for {tier.code}, valid until{' '}
            {formatDateTime(issued.expiresAt)}. They are shown this once (the platform keeps no list): download or copy them now. Each works
            for one account.
          </p>
          <textarea className="codes-list mono" readOnly rows={6} value={issued.codes.join('\n')} data-testid="codes-list" />
          <div className="wr-dialog-actions">
            <button
              type="button"
              className="wr-button"
              onClick={() => downloadText(`access-codes-${tier.code}.csv`, `code\n${issued.codes.join('\n')}\n`, 'text/csv')}
              data-testid="codes-download"
            >
              Download CSV
            </button>
            <button type="button" className="wr-button wr-button-go" onClick={onClose}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <p>
            Signed codes for the <strong>{tier.name}</strong> presale queue, checked without the platform&apos;s database. Each is
            single-account: bound to the account given, or else to the first account that joins with it. Issuing is audited (how many, for
            whom, until when; not the codes).
          </p>
          <Field
            label="How many"
            name="count"
            error={errors.count}
            hint={`At most ${formatCount(ACCESS_CODES_MAX)}; 1 when bound to an account.`}
          >
            <input
              type="number"
              inputMode="numeric"
              min={1}
              max={ACCESS_CODES_MAX}
              value={count}
              onChange={(e) => setCount(e.target.value)}
            />
          </Field>
          <Field label="For account (optional)" name="accountId" error={errors.accountId} hint="Empty: the first account to use each code.">
            <input value={accountId} onChange={(e) => setAccountId(e.target.value)} />
          </Field>
          <Field
            label="Valid until (optional)"
            name="validUntil"
            error={errors.validUntil}
            hint={`Empty: when the tier closes${tier.closesAt ? ` (${formatDateTime(tier.closesAt)})` : ''}.`}
          >
            <input type="datetime-local" value={validUntil} onChange={(e) => setValidUntil(e.target.value)} />
          </Field>
          <ConfirmActions
            error={errors.form ?? errors.tier}
            pending={issue.isPending}
            onClose={onClose}
            confirm={{ label: 'Issue codes', className: 'wr-button-go', testId: 'tier-confirm-codes' }}
          />
        </form>
      )}
    </ModalDialog>
  );
}

/** Pause or resume one presale tier's queue: says what happens, asks for a reason (audited) and an explicit confirmation. */
function QueueDialog({
  kind,
  eventId,
  tier,
  queue,
  onClose,
  onDone,
}: {
  kind: 'pause' | 'resume';
  eventId: string;
  tier: TierPanelRow;
  queue: TierQueue;
  onClose: () => void;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const done = { onSuccess: onDone, onError: (e: unknown) => setErrors(errorsOf(e)) };
  const pause = useMutation(trpc.warRoom.pause.mutationOptions(done));
  const resume = useMutation(trpc.warRoom.resume.mutationOptions(done));
  const pending = pause.isPending || resume.isPending;

  function submit(e: FormEvent) {
    e.preventDefault();
    const input = { eventId, tier: tier.code, reason };
    if (kind === 'pause') {
      const parsed = pauseQueueSchema.safeParse(input);
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      pause.mutate(parsed.data);
    } else {
      const parsed = resumeQueueSchema.safeParse(input);
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      resume.mutate(parsed.data);
    }
  }

  return (
    <ModalDialog
      testId={`tier-dialog-${kind}`}
      title={kind === 'pause' ? `Pause the ${tier.name} queue` : `Resume the ${tier.name} queue`}
      onClose={onClose}
    >
      <form onSubmit={submit} noValidate>
        <p>
          {kind === 'pause' ? (
            <>
              Nobody new is admitted from the <strong>{tier.name}</strong> ({tier.code}) presale queue until someone resumes it. Its{' '}
              {formatCount(queue.waiting)} fans waiting keep their places and read <strong>PAUSED</strong>; fans already admitted can still
              buy. The event&apos;s other queues (the general sale and the other presales) keep admitting.
            </>
          ) : (
            <>
              Admissions from the <strong>{tier.name}</strong> ({tier.code}) presale queue start again ({formatCount(queue.waiting)} fans
              waiting). Paused by {queue.pausedBy}: “{queue.pausedReason}”.
            </>
          )}
        </p>
        <ReasonField
          label={kind === 'pause' ? 'Why pause? (goes to the audit log)' : 'Reason (goes to the audit log)'}
          value={reason}
          onChange={setReason}
          error={errors.reason}
        />
        <ConfirmActions
          error={errors.form ?? errors.tier}
          pending={pending}
          onClose={onClose}
          confirm={{
            label: kind === 'pause' ? `Pause ${tier.code}` : `Resume ${tier.code}`,
            className: kind === 'pause' ? 'wr-button-stop' : 'wr-button-go',
            testId: 'tier-confirm-queue',
          }}
        />
      </form>
    </ModalDialog>
  );
}
