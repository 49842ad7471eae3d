import { useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { RouterOutputs } from '@onsale/bff/root';
import { useTRPC } from '../../../../trpc';
import { EventLinks } from '../../../-components/EventLinks';
import { FAIRNESS_LABELS } from '../../../-components/EventForm';
import { downloadText } from '../../../-components/download';
import { formatCount, formatDateTime } from '../../../-components/format';
import { When } from '../../../-components/When';
import { actorWords, formatDuration, formatInstant } from '@onsale/shared/words';
import '../../../-components/event-form.css';
import { GridTable } from '../../../-components/GridTable';
import { loadOrNotFound, notFoundOrForbidden } from '../../../-components/route-loading';

type Report = RouterOutputs['fairnessAudit']['get'];

// The audit changes at the open (reveal) and minute by minute during the sale; a slow refresh is enough.
const REFRESH_MS = 15_000;

export const Route = createFileRoute('/_authed/events/$eventId_/fairness')({
  loader: ({ context: { trpc, queryClient }, params: { eventId } }) =>
    loadOrNotFound(() => queryClient.ensureQueryData(trpc.fairnessAudit.get.queryOptions({ eventId }))),
  notFoundComponent: notFoundOrForbidden('event'),
  component: FairnessAuditPage,
});

function FairnessAuditPage() {
  const { eventId } = Route.useParams();
  const trpc = useTRPC();
  const { data: r } = useSuspenseQuery(trpc.fairnessAudit.get.queryOptions({ eventId }, { refetchInterval: REFRESH_MS }));
  const s = r.summary;
  const f = s.fairness;
  const mode = f.mode as keyof typeof FAIRNESS_LABELS;
  const fileBase = `onsale-audit-${s.eventId}`;
  // Admins and operators also get the internal columns (who, why) from the complete operator export.
  const ops = r.operatorExport?.json ?? null;

  return (
    <section>
      <p className="crumbs">
        <Link to="/">Events</Link> /{' '}
        <Link to="/events/$eventId" params={{ eventId }}>
          {s.eventName}
        </Link>{' '}
        / Fairness audit
      </p>
      <h1 data-testid="fairness-title">Fairness audit: {s.eventName}</h1>
      <EventLinks eventId={eventId} listingId={r.listingId} />
      <p className="muted">
        {s.venueName} · on sale <When iso={s.onsaleAt} zone={r.timeZone} />. Anyone can check this with{' '}
        <code>npm run onsale -- audit:verify {s.eventId}</code>.
      </p>
      <div className="page-actions">
        <button
          type="button"
          className="primary"
          data-testid="download-markdown"
          onClick={() => downloadText(`${fileBase}.md`, r.published.markdown, 'text/markdown')}
        >
          Download the publishable summary (Markdown)
        </button>
        <button
          type="button"
          className="secondary"
          data-testid="download-json"
          onClick={() => downloadText(`${fileBase}.json`, `${JSON.stringify(s, null, 2)}\n`, 'application/json')}
        >
          Download the publishable summary (JSON)
        </button>
      </div>
      <p className="muted">
        The publishable summary is what fans and the press may read: no operator names, no internal reasons; a pause shows only its public
        note.
      </p>
      {r.operatorExport && (
        <div className="page-actions" data-testid="operator-export">
          <span className="muted">Internal:</span>
          <button
            type="button"
            className="secondary"
            data-testid="download-operator-json"
            onClick={() =>
              downloadText(`${fileBase}-operator.json`, `${JSON.stringify(r.operatorExport!.json, null, 2)}\n`, 'application/json')
            }
          >
            Download the operator export (JSON)
          </button>
          <button
            type="button"
            className="secondary"
            data-testid="download-operator-markdown"
            onClick={() => downloadText(`${fileBase}-operator.md`, r.operatorExport!.markdown, 'text/markdown')}
          >
            Download the operator export (Markdown)
          </button>
        </div>
      )}

      <div className="two-col">
        <div className="card">
          <h2>How the queue is ordered</h2>
          <p>
            <strong>{FAIRNESS_LABELS[mode] ?? f.mode}</strong> <code>{f.mode}</code>
          </p>
          <blockquote className="fairness-description">{f.description}</blockquote>
          <SignOffs signOffs={r.signOffs} mode={f.mode} />
        </div>
        <div className="card">
          <h2>The draw</h2>
          <dl className="kv">
            <dt>Seed commitment (published before the open)</dt>
            <dd className="mono" data-testid="seed-commitment">
              {f.seedCommitment}
            </dd>
            <dt>Seed (revealed at the open)</dt>
            <dd className="mono" data-testid="seed">
              {f.seed ?? <span className="muted">not revealed yet: published when the on-sale opens</span>}
            </dd>
            <dt>Revealed at</dt>
            <dd>{f.seedRevealedAt ? <When iso={f.seedRevealedAt} zone={r.timeZone} /> : '—'}</dd>
            <dt>Pre-open cohort</dt>
            <dd data-testid="cohort-size">
              {f.cohortSize === null
                ? 'not sealed yet'
                : `${formatCount(f.cohortSize)} join numbers, sealed ${f.sealedAt ? formatInstant(f.sealedAt, r.timeZone) : ''}`}
            </dd>
          </dl>
          <h3>Verification</h3>
          <ul className="checks" data-testid="verification">
            {r.verification.checks.map((c) => (
              <li key={c.name} data-check={c.name} data-ok={c.ok}>
                <span className={c.ok ? 'check-ok' : 'check-fail'}>{c.ok ? '✓' : '✗'}</span> {c.detail}
              </li>
            ))}
          </ul>
        </div>
      </div>

      <h2>Positions of the pre-open cohort</h2>
      <PositionHistogram histogram={r.histogram} />

      <h2>Admissions per minute</h2>
      <p className="muted">
        Admitted through position {formatCount(s.admissions.admittedThrough)}: {formatCount(s.admissions.totalPositionsAdvanced)} positions
        advanced, {formatCount(s.admissions.totalAdmissionTokensIssued)} admission tokens issued.
      </p>
      {s.admissions.perMinute.length === 0 ? (
        <p className="muted" data-testid="no-admissions">
          No admissions yet.
        </p>
      ) : (
        <figure className="chart" aria-label="Admissions per minute" data-testid="admissions-chart">
          <ResponsiveContainer width="100%" height={240}>
            <BarChart data={s.admissions.perMinute.map((m) => ({ ...m, label: formatInstant(m.minute, r.timeZone, { date: false }) }))}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="label" />
              <YAxis allowDecimals={false} width={56} />
              <Tooltip />
              <Legend />
              <Bar dataKey="positionsAdvanced" name="Positions advanced" fill="#2b6cb0" isAnimationActive={false} />
              <Bar dataKey="admissionTokensIssued" name="Admission tokens issued" fill="#2f855a" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </figure>
      )}

      <h2>When the queue stopped</h2>
      {s.pauses.length === 0 ? (
        <p className="muted" data-testid="no-pauses">
          The queue was never paused.
        </p>
      ) : (
        <table className="grid" data-testid="pauses">
          <thead>
            <tr>
              <th>Paused</th>
              <th>Resumed</th>
              <th className="num">Paused for</th>
              <th>Public note</th>
              {ops && <th>By, and why (internal)</th>}
            </tr>
          </thead>
          <tbody>
            {s.pauses.map((p, i) => {
              const o = ops?.pauses[i];
              return (
                <tr key={p.pausedAt} data-testid="pause-row">
                  <td>
                    <When iso={p.pausedAt} zone={r.timeZone} />
                  </td>
                  <td>{p.resumedAt ? <When iso={p.resumedAt} zone={r.timeZone} /> : <strong>still paused</strong>}</td>
                  <td className="num">{p.pausedSeconds === null ? '—' : formatDuration(p.pausedSeconds)}</td>
                  <td data-testid="pause-note">{p.note ?? <span className="muted">none</span>}</td>
                  {ops && (
                    <td className="muted" data-testid="pause-internal">
                      {o ? `${actorWords(o.pausedBy)}: ${o.reason}${o.resumedBy ? `; resumed by ${actorWords(o.resumedBy)}` : ''}` : '—'}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}

      {s.rateChanges.length > 0 && (
        <>
          <h2>Admission rate changes</h2>
          <table className="grid">
            <thead>
              <tr>
                <th>At</th>
                <th className="num">Rate (admits/min)</th>
                {ops && <th>By, and why (internal)</th>}
              </tr>
            </thead>
            <tbody>
              {s.rateChanges.map((o, i) => (
                <tr key={`${o.at}-${i}`}>
                  <td>
                    <When iso={o.at} zone={r.timeZone} />
                  </td>
                  <td className="num">{o.perMinute ?? 'back to the plan'}</td>
                  {ops && (
                    <td className="muted">
                      {ops.rateOverrides[i]
                        ? `${actorWords(ops.rateOverrides[i].by)}${ops.rateOverrides[i].reason ? `: ${ops.rateOverrides[i].reason}` : ''}`
                        : '—'}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      <h2>Configuration changes</h2>
      {s.configurationChanges.length === 0 ? (
        <p className="muted">None recorded.</p>
      ) : (
        <table className="grid" data-testid="configuration-changes">
          <thead>
            <tr>
              <th>At</th>
              <th>Change</th>
              {ops && <th>By (internal)</th>}
            </tr>
          </thead>
          <tbody>
            {s.configurationChanges.map((c, i) => (
              <tr key={`${c.at}-${i}`}>
                <td>
                  <When iso={c.at} zone={r.timeZone} />
                </td>
                <td>{c.change}</td>
                {ops && <td className="muted">{ops.configurationChanges[i] ? actorWords(ops.configurationChanges[i].by) : '—'}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="muted">
        {s.soldOutAt
          ? `Sold out at ${formatInstant(s.soldOutAt, r.timeZone)}.`
          : `Not sold out: ${formatCount(s.inventory.available)} available, ${formatCount(s.inventory.held)} held, ${formatCount(s.inventory.sold)} sold of ${formatCount(s.inventory.capacity)}.`}
      </p>
    </section>
  );
}

function SignOffs({ signOffs, mode }: { signOffs: Report['signOffs']; mode: string }) {
  const live = signOffs.find((x) => x.supersededAt === null && x.fairnessMode === mode);
  return (
    <div data-testid="fairness-signoffs">
      {live ? (
        <p className="banner banner-ok">
          Signed off by <strong>{live.signedOffBy}</strong> on {formatDateTime(live.signedOffAt)}.
        </p>
      ) : (
        <p className="banner banner-warn">Not signed off by a promoter.</p>
      )}
      {signOffs.filter((x) => x.supersededAt).length > 0 && (
        <ul className="muted">
          {signOffs
            .filter((x) => x.supersededAt)
            .map((x) => (
              <li key={x.id}>
                {x.fairnessMode}: signed off by {x.signedOffBy} {formatDateTime(x.signedOffAt)}, withdrawn {formatDateTime(x.supersededAt!)}{' '}
                ({x.supersededReason})
              </li>
            ))}
        </ul>
      )}
    </div>
  );
}

function PositionHistogram({ histogram }: { histogram: Report['histogram'] }) {
  if (!histogram)
    return (
      <p className="muted" data-testid="no-histogram">
        Positions are drawn at the open, from the seed committed above; they appear here once it is revealed.
      </p>
    );
  if (histogram.accounts === 0) return <p className="muted">Nobody joined before the open.</p>;
  const data = histogram.buckets.map((b) => ({ ...b, label: b.from === b.to ? String(b.from) : `${b.from}–${b.to}` }));
  return (
    <div className="split">
      <figure className="chart" aria-label="Queue positions of the pre-open cohort" data-testid="position-histogram">
        <ResponsiveContainer width="100%" height={260}>
          <BarChart data={data}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="label" interval="preserveStartEnd" />
            <YAxis allowDecimals={false} width={48} />
            <Tooltip />
            <Legend />
            <Bar dataKey="earlyJoiners" name="Joined in the first half" stackId="p" fill="#2b6cb0" isAnimationActive={false} />
            <Bar dataKey="lateJoiners" name="Joined in the second half" stackId="p" fill="#c05621" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
        <figcaption className="muted">
          Queue positions of the {formatCount(histogram.accounts)} accounts that joined before the open. A fair draw spreads early and late
          joiners evenly over every position.
        </figcaption>
      </figure>
      <GridTable columns={['Joined in the', { label: 'Accounts', num: true }, { label: 'Mean position', num: true }]} testId="join-deciles">
        {histogram.meanPositionByJoinDecile.map((d) => (
          <tr key={d.decile}>
            <td>{ordinal(d.decile)} tenth</td>
            <td className="num">{formatCount(d.accounts)}</td>
            <td className="num">{d.meanPosition}</td>
          </tr>
        ))}
        <tr>
          <td className="muted">Expected under a fair draw</td>
          <td />
          <td className="num muted">{histogram.expectedMeanPosition}</td>
        </tr>
      </GridTable>
    </div>
  );
}

const ordinal = (n: number) => `${n}${n === 1 ? 'st' : n === 2 ? 'nd' : n === 3 ? 'rd' : 'th'}`;
