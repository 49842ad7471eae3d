// Console users: sign-in, sessions, roles and the promoter's organisation scope. (Browser code imports
// `@onsale/shared/users/schema` instead: this entry point uses node:crypto.)
export * from './users.schema.js';
export * from './users.service.js';
export { generatePassword, hashPassword, verifyPassword } from './password.js';
export type { Role } from './users.schema.js';
export { isCommonPassword, COMMON_PASSWORD_MESSAGE } from './common-passwords.js';
export { DEFAULT_SIGN_IN_THROTTLE, clientAddressKey, type SignInThrottleConfig } from './sign-in-throttle.service.js';
export { judgePassword, passwordUserInputs, REQUIRED_PASSWORD_SCORE, type PasswordStrength } from './password-strength.js';
