export { AccountTokens, ACCOUNT_ID_PATTERN, type FanIdentity } from './account-token.js';
export { IdentityProviderTokens, IDENTITY_PROVIDER_ALGORITHMS, type IdentityProviderOptions } from './identity-provider.js';
export { ensureAccount } from './accounts.repository.js';
export { displayNameFromClaims, DISPLAY_NAME_MAX } from './display-name.js';
export { AccountRecorder } from './account-recorder.js';
