import { DomainError } from '@onsale/shared';
import { issueAccessCodes, rollForward } from '@onsale/shared/allocations';
import { getEvent } from '@onsale/shared/events';
import { PERMISSIONS, requireEventAccess, type SessionUser } from '@onsale/shared/users';
import { accessCodesSchema, tierRollSchema } from '@onsale/shared/warroom/schema';
import type { Context } from '../context.js';
import { roleProcedure, router } from '../trpc.js';

// Presale tiers from the console: rolling a tier forward now and issuing its access
// codes. The tiers themselves are read with the event (events.byId) and in the war room's snapshot. A promoter acts
// only on their organisation's events (requireEventAccess); the domain audits both with the user's e-mail.
const rollers = roleProcedure(...PERMISSIONS['tiers.roll']);
const codeIssuers = roleProcedure(...PERMISSIONS['tiers.codes']);

async function visibleEvent(ctx: Context & { user: SessionUser }, eventId: string) {
  const event = await getEvent(ctx.db, eventId);
  requireEventAccess(ctx.user, event);
  return event;
}

export const tiersRouter = router({
  /**
   * Rolls a presale tier's unsold seats forward into the next tier now, before its roll time: one transaction,
   * the waitlist told, audited `allocation.rolled` with the reason. TIER_NOT_FOUND, TIER_DOES_NOT_ROLL (the
   * general sale) at `tier`.
   */
  roll: rollers.input(tierRollSchema).mutation(async ({ ctx, input }) => {
    const event = await visibleEvent(ctx, input.eventId);
    const rolled = await rollForward(ctx.db, event.id, input.tier, ctx.user.email, { force: true, reason: input.reason });
    ctx.warRoom?.refresh();
    return rolled;
  }),

  /**
   * Issues signed access codes for an ACCESS_CODE tier and returns them (this once: they are not stored), audited
   * `allocation.codes_issued` without the codes. TIER_TAKES_NO_CODES for another kind of tier.
   */
  issueCodes: codeIssuers.input(accessCodesSchema).mutation(async ({ ctx, input }) => {
    const event = await visibleEvent(ctx, input.eventId);
    if (!ctx.accessCodeKey)
      throw new DomainError(
        'unavailable',
        'ACCESS_CODES_UNAVAILABLE',
        'this console has no token secret to sign access codes with (QUEUE_TOKEN_SECRET)',
        { field: 'tier' },
      );
    return issueAccessCodes(ctx.db, ctx.accessCodeKey, event.id, input.tier, {
      count: input.count,
      ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
      ...(input.validUntil !== undefined ? { validUntil: new Date(input.validUntil) } : {}),
      actor: ctx.user.email,
    });
  }),
});
