export { AccountTokens, ACCOUNT_ID_PATTERN } from './account-token.js';
export { ensureAccount } from './accounts.repository.js';
