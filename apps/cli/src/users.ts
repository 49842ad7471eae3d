import { json, text, type Command } from './command.js';
import { UsageError } from './errors.js';

// Console users: `user:create` (the first admin is made this way), `user:list`, and `event:organisation`, which
// gives an event to a promoter's organisation. Registered in cli.ts's command table; the database layer and
// node:crypto load only when one of these runs.

export const USERS_USAGE = `  user:create --email <e-mail> --role <admin|operator|promoter|viewer> [--organisation <name>] [--password <p>]
                               create a console user; a promoter needs --organisation (created if new). The
                               password comes from --password, else ONSALE_PASSWORD (keeps it out of shell history
                               and ps), else one is generated and printed once; prints the user as JSON
  user:list                    every console user (e-mail, role, organisation; never a password) as JSON
  event:organisation <eventId> (--organisation <name> | --house)
                               give an event to an organisation, whose promoters then see it, or back to the
                               house (admins, operators and viewers only); audited`;

async function context() {
  const [{ withDatabase }, { loadCliConfig, consolePasswordFromEnv }, { defaultActor }, users] = await Promise.all([
    import('./commands.js'),
    import('./env.js'),
    import('./command.js'),
    import('@onsale/shared/users'),
  ]);
  return { withDatabase, databaseUrl: loadCliConfig().databaseUrl, consolePasswordFromEnv, actor: defaultActor(), users };
}

function userView(u: { id: string; email: string; role: string; organisationName: string | null; createdAt: Date; createdBy: string }) {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    organisation: u.organisationName,
    createdAt: u.createdAt.toISOString(),
    createdBy: u.createdBy,
  };
}

export const userCommands: Record<string, Command> = {
  'user:create': {
    options: { email: { type: 'string' }, role: { type: 'string' }, organisation: { type: 'string' }, password: { type: 'string' } },
    positionals: [],
    async run({ values, io }) {
      const email = text(values.email);
      const role = text(values.role);
      if (!email || !role) throw new UsageError('user:create needs --email <e-mail> and --role <admin|operator|promoter|viewer>');
      const { withDatabase, databaseUrl, consolePasswordFromEnv, actor, users } = await context();
      const password = text(values.password) ?? consolePasswordFromEnv();
      const organisation = text(values.organisation);
      const { user, generatedPassword } = await withDatabase(databaseUrl, (db) =>
        db.transaction().execute((trx) => users.createUser(trx, { email, role, organisation, password }, actor)),
      );
      io.out(json(generatedPassword ? { ...userView(user), password: generatedPassword } : userView(user)));
      if (generatedPassword)
        io.err(
          `generated a password for ${user.email}: it is shown only this once (the database keeps its hash). Sign in to the console with it.`,
        );
    },
  },
  'user:list': {
    options: {},
    positionals: [],
    async run({ io }) {
      const { withDatabase, databaseUrl, users } = await context();
      io.out(json((await withDatabase(databaseUrl, (db) => users.listUsers(db))).map(userView)));
    },
  },
  'event:organisation': {
    options: { organisation: { type: 'string' }, house: { type: 'boolean' } },
    positionals: ['eventId'],
    async run({ values, positionals, io }) {
      const organisation = text(values.organisation);
      if ((organisation === undefined) === (values.house !== true))
        throw new UsageError('event:organisation needs exactly one of --organisation <name> or --house');
      const { withDatabase, databaseUrl, actor, users } = await context();
      const r = await withDatabase(databaseUrl, (db) =>
        db.transaction().execute((trx) => users.assignEventOrganisation(trx, positionals[0]!, organisation ?? null, actor)),
      );
      io.out(json({ eventId: r.eventId, organisation: r.organisation?.name ?? null }));
    },
  },
};
