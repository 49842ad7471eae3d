import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { eventsRouter } from './routers/events.js';
import { router } from './trpc.js';

export const appRouter = router({
  events: eventsRouter,
});

export type AppRouter = typeof appRouter;
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
