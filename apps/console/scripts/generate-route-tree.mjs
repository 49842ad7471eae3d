// Writes src/routeTree.gen.ts without building: the TanStack Router plugin generates the tree when Vite
// resolves its config, so resolving vite.config.ts is enough. `tsc` needs the file; it is not committed.
import { fileURLToPath } from 'node:url';
import { resolveConfig } from 'vite';

await resolveConfig({ root: fileURLToPath(new URL('..', import.meta.url)), logLevel: 'warn' }, 'build');
