// A new queue's state, apart from the queue service: creating an event starts its queue, and so does each presale
// tier (allocations/, below queue/, opens and removes a tier's queue through sale-setup/tier-queues.ts, which hands it
// these two steps).
import type { Trx } from '../db/connect.js';
import { commitSeed, generateSeed } from './fairness.js';
import { insertQueueState } from './queue.repository.js';

/** Gives a new event its queue: a random seed (kept secret until the open) and its published commitment. */
export async function initQueue(trx: Trx, eventId: string): Promise<{ seedCommitment: string }> {
  const seed = generateSeed();
  const seedCommitment = await commitSeed(seed);
  await insertQueueState(trx, eventId, seed, seedCommitment);
  return { seedCommitment };
}

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { deleteQueue } from './queue.repository.js';
