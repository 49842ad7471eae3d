// Setting up a sale: creating and configuring an event with everything it sells through (sections and seats, presale
// tiers, the lottery, the queues, general-admission shards, the waitlist settings, the fairness sign-off). The top
// layer of the domain (docs/architecture.md, "The layers"): it uses the other domains; none of them uses it.
export * from './configure.service.js';
export { createEvent, type CreateEventOptions } from './create-event.js';
export { getQueueCopy, setQueueCopy, type QueueCopyView, type StateWords } from './queue-copy.service.js';
