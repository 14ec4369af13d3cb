// `npm run user:reset-password`: sets a new password for a user and revokes every one of the user's
// API tokens (sign-in tokens included), so whoever held the old password or a token is locked out.
import * as v from 'valibot';
import { parse } from '../src/http/validate.js';
import { SignUpSchema } from '../src/auth/schema.js';
import { hashPassword } from '../src/auth/password.js';
import { closeDatabase } from '../src/db.js';
import { loadServiceConfig, openServiceStores, parseCommandLine, readPassword, runScript, UsageError } from './cli.js';

const USAGE = `Usage: npm run user:reset-password -- --email <email> [--password <password>]

Sets a new password for the user with this email in the database at DATABASE_PATH and revokes
all of the user's API tokens. Without --password the new password is read from standard input:
typed twice at a terminal (not shown), or piped, e.g.
  printf '%s' "$NEW_PW" | npm run user:reset-password -- --email ada@example.com
The password must have 8-1024 characters. The service may keep running meanwhile.

Options:
  --email <email>        the user's email
  --password <password>  the new password (visible in the process list: prefer stdin)
  -h, --help             show this help
`;

/** Sign-up's own rules for the two fields this script takes. */
const ResetSchema = v.pick(SignUpSchema, ['email', 'password']);

/** No token has this id, so "revoke every token except this one" revokes them all. */
const NO_TOKEN = '';

runScript(USAGE, async () => {
  const { values, positionals } = parseCommandLine(USAGE, { email: { type: 'string' }, password: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  if (values.email === undefined) throw new UsageError('--email is required');
  const config = loadServiceConfig();
  const { db, stores } = openServiceStores(config);
  try {
    // Look the user up before asking for a password nobody can use.
    const email = parse(ResetSchema.entries.email, values.email, 'email');
    if (!stores.users.getByEmail(email)) throw new Error(`no user with the email ${email}`);
    const input = parse(ResetSchema, { email, password: await readPassword(values.password, 'New password') });
    const passwordHash = await hashPassword(input.password, config.scrypt);
    // Read again after the (awaited) hash; the update and the revocation are one transaction.
    const user = stores.users.getByEmail(input.email);
    if (!user) throw new Error(`no user with the email ${input.email}`);
    const revoked = stores.apiTokens.list(user.id, { limit: 1_000_000, afterSeq: 0 }).rows.length;
    stores.users.update(user.id, { name: user.name, passwordHash }, NO_TOKEN);
    process.stdout.write(`password of ${user.email} changed; ${revoked} API token(s) revoked\n`);
  } finally {
    closeDatabase(db);
  }
});
