// `npm run user:create`: creates a user account from the command line, validated and hashed exactly
// as sign-up does it (same schema, same scrypt cost, same store).
import { parse } from '../src/http/validate.js';
import { SignUpSchema } from '../src/auth/schema.js';
import { hashPassword } from '../src/auth/password.js';
import { closeDatabase } from '../src/db.js';
import { loadServiceConfig, openServiceStores, parseCommandLine, readPassword, runScript, UsageError } from './cli.js';

const USAGE = `Usage: npm run user:create -- --email <email> --name <name> [--password <password>]

Creates a user in the database at DATABASE_PATH (created with its schema if missing).
Without --password the password is read from standard input: typed twice at a terminal
(not shown), or piped, e.g.  printf '%s' "$PW" | npm run user:create -- --email a@b.c --name Ada
Prefer that over --password, which other users of the machine can see in the process list.
The same rules as sign-up apply: a valid email, a name of 1-200 characters, a password of
8-1024 characters. Prints the new user's id and email (never the password).

Options:
  --email <email>        the account's email (stored trimmed and lower-cased)
  --name <name>          the user's display name
  --password <password>  the password (see above)
  -h, --help             show this help
`;

runScript(USAGE, async () => {
  const { values, positionals } = parseCommandLine(USAGE, {
    email: { type: 'string' },
    name: { type: 'string' },
    password: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  if (values.email === undefined) throw new UsageError('--email is required');
  if (values.name === undefined) throw new UsageError('--name is required');
  const config = loadServiceConfig();
  const password = await readPassword(values.password);
  const input = parse(SignUpSchema, { email: values.email, name: values.name, password });

  const { db, stores } = openServiceStores(config);
  try {
    if (stores.users.getByEmail(input.email)) throw new Error(`a user with the email ${input.email} already exists`);
    const passwordHash = await hashPassword(input.password, config.scrypt);
    const user = stores.users.create({ email: input.email, name: input.name ?? values.name, passwordHash });
    process.stdout.write(`created user ${user.id} <${user.email}>\n`);
  } finally {
    closeDatabase(db);
  }
});
