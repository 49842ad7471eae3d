// Fan support: an account's whole picture, holds released for a fan, accounts blocked from an event.
export * from './support.schema.js';
export * from './support.service.js';
export { assertNotBlocked, accountBlocked } from '../events/blocks.js';
export { findBlockedAccounts } from '../events/blocks.js';
