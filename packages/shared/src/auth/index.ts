export { AccountTokens, ACCOUNT_ID_PATTERN, type FanIdentity } from './account-token.js';
export { IdentityProviderTokens, IDENTITY_PROVIDER_ALGORITHMS, type IdentityProviderOptions } from './identity-provider.js';
export { ensureAccount } from './accounts.repository.js';
export { AccountRecorder } from './account-recorder.js';
