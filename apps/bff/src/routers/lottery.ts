import { z } from 'zod';
import { getEvent } from '@onsale/shared/events';
import { drawLottery, lotterySummary, verifyLotteryAudit, type DrawSummary } from '@onsale/shared/lottery';
import { PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

const readers = roleProcedure(...PERMISSIONS['events.read']);
/** Who runs a draw (`lottery.draw`): the war room (admin, operator) and the event's own promoter (requireEventAccess below). */
const drawers = roleProcedure(...PERMISSIONS['lottery.draw']);
const eventInput = z.object({ eventId: z.string().trim().min(1).max(100) });

const iso = (d: Date) => d.toISOString();
function drawView(d: DrawSummary) {
  return { ...d, drawnAt: iso(d.drawnAt), cohorts: d.cohorts.map((c) => ({ ...c, opensAt: iso(c.opensAt), closesAt: iso(c.closesAt) })) };
}

/** A registration lottery from the console: its summary, the public audit, and running the draw. */
export const lotteryRouter = router({
  /** Settings, registration count, commitment (the seed once drawn) and the draw per cohort. NOT_A_LOTTERY_EVENT otherwise. */
  summary: readers.input(eventInput).query(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    const s = await lotterySummary(ctx.db, event.id);
    return {
      ...s,
      onsaleAt: iso(s.onsaleAt),
      registrationOpensAt: iso(s.registrationOpensAt),
      registrationClosesAt: iso(s.registrationClosesAt),
      draw: s.draw ? drawView(s.draw) : null,
    };
  }),

  /** The winners re-derived from the public data and compared with the recorded ones (the CLI's audit:verify). */
  verify: readers.input(eventInput).query(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    const r = await verifyLotteryAudit(ctx.db, event.id);
    return { ok: r.ok, checks: r.checks, registrations: r.registrations, winners: r.winners.length };
  }),

  /**
   * Runs the draw once registration has closed (DRAW_TOO_EARLY before): reveals the seed, picks winners and
   * cohorts, waitlists the rest; audited with the user's e-mail. Run again, it returns the recorded draw.
   */
  draw: drawers.input(eventInput).mutation(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    return drawView(await ctx.db.transaction().execute((trx) => drawLottery(trx, event.id, { actor: ctx.user.email })));
  }),
});
