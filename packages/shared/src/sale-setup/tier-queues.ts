// A presale tier's own queue, opened and removed by the queue domain for the tiers' domain. allocations/ sits below
// queue/ (the queue's join reads the tiers: docs/architecture.md, "The layers"), so it may not import queue/; the
// orchestration that sets a sale up, which may use both, hands it these steps.
import type { TierQueues } from '../allocations/allocations.service.js';
import { deleteQueue, initQueue } from '../queue/queue-init.js';

/** The queue domain's steps for a presale tier's queue (createAllocations, replaceAllocations). */
export const tierQueues: TierQueues = { open: initQueue, remove: deleteQueue };
