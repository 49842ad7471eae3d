// One install of the platform: its data directory, its own secrets and its own embedded database. Node only.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export {
  installSecrets,
  InstallSecretsError,
  INSTALL_SECRETS,
  MIN_SECRET_BYTES,
  type InstallSecrets,
  type InstallSecretsOptions,
} from './secrets.js';
export {
  openInstallDatabase,
  InstallDatabaseError,
  EMBEDDED_SETTINGS_FILE,
  type InstallDatabase,
  type EmbeddedSettings,
} from './database.js';
export { trustProxyOf } from './trust-proxy.js';
export { withoutProcessHooks } from './process-hooks.js';

/** The checkout this code runs from (packages/shared/src/install/ is four levels down). */
export const installRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/**
 * The install's data directory, `./.data/` of its checkout: the embedded database, its settings and the generated
 * secrets. Every process of the install (npm start, the CLI, standalone servers, tests) finds the same one.
 */
export function installDataDir(): string {
  return join(installRoot, '.data');
}
