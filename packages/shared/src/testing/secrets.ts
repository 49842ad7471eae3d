import { installDataDir, installSecrets, type InstallSecrets } from '../install/index.js';

/**
 * The secrets of the install the tests run in (./.data/secrets/, made on first use), as the apps the tests build
 * without explicit secrets have them: tests sign tokens with these.
 */
export function testSecrets(): InstallSecrets {
  return installSecrets(installDataDir(), {});
}
