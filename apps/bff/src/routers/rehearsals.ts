import { z } from 'zod';
import { DomainError } from '@onsale/shared';
import { insertAudit } from '@onsale/shared/events';
import {
  getRehearsalRun,
  judgeStoredReport,
  listRehearsalRuns,
  rehearsalLaunchSchema,
  REHEARSAL_EXAMPLES,
  type RehearsalReport,
  type RehearsalReportRow,
} from '@onsale/shared/rehearsal';
import { PERMISSIONS } from '@onsale/shared/users';
import { readWarRoomSnapshot } from '@onsale/shared/warroom';
import { roleProcedure, router } from '../trpc.js';

// Rehearsals (synthetic on-sales, `onsale rehearse`) from the console: everyone who reads events reads their reports;
// operators and admins start one against the product this console runs with.
const readers = roleProcedure(...PERMISSIONS['events.read']);
const controllers = roleProcedure(...PERMISSIONS['warroom.control']);

const runView = (r: RehearsalReportRow) => {
  const report = r.report as RehearsalReport | null;
  // Judged again by today's rule, so a run stored as PASS before a target was checked shows what it missed.
  const verdict = judgeStoredReport(report)?.verdict ?? report?.verdict ?? null;
  return {
    id: r.id,
    eventId: r.event_id,
    eventName: r.event_name,
    target: r.target,
    fans: r.fans,
    timeScale: r.time_scale,
    status: verdict && (r.status === 'PASS' || r.status === 'FAIL') ? verdict : r.status,
    startedAt: r.started_at.toISOString(),
    finishedAt: r.finished_at?.toISOString() ?? null,
    verdict,
    seats: report?.seats ?? null,
    seatsSold: report?.seatsSold ?? null,
  };
};

/**
 * How far a running rehearsal has got, from its event's war-room figures: fans joined of those coming, seats sold.
 * Best effort: the run's own load can keep the database from answering, and the run's page must still load (null).
 */
async function progressOf(db: Parameters<typeof readWarRoomSnapshot>[0], eventId: string, fans: number) {
  let s: Awaited<ReturnType<typeof readWarRoomSnapshot>>;
  try {
    s = await readWarRoomSnapshot(db, eventId);
  } catch {
    return null;
  }
  return {
    at: s.at,
    state: s.state,
    fans,
    joined: s.queue.joined,
    waiting: s.queue.waiting,
    admittedLastMinute: s.admission.admittedLastMinute,
    seats: s.inventory.capacity,
    sold: s.inventory.sold,
    held: s.inventory.held,
    orders: s.sales.orders,
  };
}

export const rehearsalsRouter = router({
  /** What the console can start: the example sales, and whether this console can start one at all (and where it aims). */
  options: readers.query(({ ctx }) => ({
    examples: Object.entries(REHEARSAL_EXAMPLES).map(([id, e]) => ({ id, label: e.label })),
    target: ctx.rehearsals?.target ?? null,
  })),

  /** The latest runs first, RUNNING ones with them. */
  list: readers.query(async ({ ctx }) => (await listRehearsalRuns(ctx.db, 50)).map(runView)),

  /** One run with its whole report (null while it runs). REHEARSAL_NOT_FOUND. */
  get: readers.input(z.object({ id: z.uuid('choose a rehearsal') })).query(async ({ ctx, input }) => {
    const r = await getRehearsalRun(ctx.db, input.id);
    if (!r) throw new DomainError('not_found', 'REHEARSAL_NOT_FOUND', 'There is no such rehearsal.', { field: 'id' });
    const report = r.report as RehearsalReport | null;
    return {
      ...runView(r),
      settings: r.settings,
      report,
      judgement: judgeStoredReport(report),
      progress: r.status === 'RUNNING' && r.event_id ? await progressOf(ctx.db, r.event_id, r.fans) : null,
    };
  }),

  /** Starts a rehearsal on a new rehearsal event made from an example sale. Audited. REHEARSALS_UNAVAILABLE, REHEARSAL_NOT_STARTED. */
  start: controllers.input(rehearsalLaunchSchema).mutation(async ({ ctx, input }) => {
    if (!ctx.rehearsals)
      throw new DomainError(
        'unavailable',
        'REHEARSALS_UNAVAILABLE',
        'This console cannot start rehearsals: it was not started with the product (use `npm start`, or the CLI).',
        {
          field: 'example',
        },
      );
    const started = await ctx.rehearsals.start(input);
    await insertAudit(ctx.db, {
      actor: ctx.user.email,
      action: 'rehearsal.started',
      details: { runId: started.runId, ...input, target: ctx.rehearsals.target },
    });
    return { runId: started.runId };
  }),
});
