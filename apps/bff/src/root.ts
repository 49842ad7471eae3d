import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { auditLogRouter } from './routers/audit-log.js';
import { authRouter } from './routers/auth.js';
import { eventConfigRouter } from './routers/event-config.js';
import { eventsRouter } from './routers/events.js';
import { fairnessAuditRouter } from './routers/fairness-audit.js';
import { usersRouter } from './routers/users.js';
import { waitlistReportRouter } from './routers/waitlist-report.js';
import { admissionPlanRouter } from './routers/plan.js';
import { warRoomRouter } from './routers/warroom.js';
import { lotteryRouter } from './routers/lottery.js';
import { tiersRouter } from './routers/tiers.js';
import { supportRouter } from './routers/support.js';
import { operationsRouter } from './routers/operations.js';
import { webhooksRouter } from './routers/webhooks.js';
import { rehearsalsRouter } from './routers/rehearsals.js';
import { ticketsRouter } from './routers/tickets.js';
import { router } from './trpc.js';

export const appRouter = router({
  auth: authRouter,
  events: eventsRouter,
  users: usersRouter,
  eventConfig: eventConfigRouter,
  fairnessAudit: fairnessAuditRouter,
  waitlistReport: waitlistReportRouter,
  auditLog: auditLogRouter,
  warRoom: warRoomRouter,
  admissionPlan: admissionPlanRouter,
  lottery: lotteryRouter,
  tiers: tiersRouter,
  support: supportRouter,
  operations: operationsRouter,
  webhooks: webhooksRouter,
  rehearsals: rehearsalsRouter,
  tickets: ticketsRouter,
});

export type AppRouter = typeof appRouter;
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
