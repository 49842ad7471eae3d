import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { authRouter } from './routers/auth.js';
import { eventsRouter } from './routers/events.js';
import { usersRouter } from './routers/users.js';
import { admissionPlanRouter } from './routers/plan.js';
import { warRoomRouter } from './routers/warroom.js';
import { router } from './trpc.js';

export const appRouter = router({
  auth: authRouter,
  events: eventsRouter,
  users: usersRouter,
  warRoom: warRoomRouter,
  admissionPlan: admissionPlanRouter,
});

export type AppRouter = typeof appRouter;
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
