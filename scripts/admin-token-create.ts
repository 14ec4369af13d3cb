// `npm run token:create`: issues an API token for a user, as POST /api-tokens does, and prints it.
import * as v from 'valibot';
import { DescriptionSchema, parse } from '../src/http/validate.js';
import { SignUpSchema } from '../src/auth/schema.js';
import { closeDatabase } from '../src/db.js';
import { formatTimestamp } from '../src/lib/ids.js';
import { loadServiceConfig, openServiceStores, parseCommandLine, runScript, UsageError } from './cli.js';

const USAGE = `Usage: npm run -s token:create -- --email <email> [--description <text>] [--expires-in-days <n>]

Issues an API token for the user with this email in the database at DATABASE_PATH and prints the
token alone on standard output (details go to standard error), so with npm's -s flag
  TOKEN=$(npm run -s token:create -- --email ada@example.com)
captures just the token. Send it as "Authorization: Bearer <token>". It shows in the user's
GET /api/v1/api-tokens and can be revoked there like any other token.

Options:
  --email <email>          the user's email
  --description <text>     what the token is for (default: "Created by token:create")
  --expires-in-days <n>    lifetime in whole days, 1-3650 (default: never expires)
  -h, --help               show this help
`;

const DaysSchema = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'must be a whole number of days'),
  v.transform(Number),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(3650, 'must be at most 3650'),
);

runScript(USAGE, () => {
  const { values, positionals } = parseCommandLine(USAGE, {
    email: { type: 'string' },
    description: { type: 'string' },
    'expires-in-days': { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  if (values.email === undefined) throw new UsageError('--email is required');
  const email = parse(SignUpSchema.entries.email, values.email, 'email');
  const description = parse(DescriptionSchema, values.description ?? 'Created by token:create', 'description');
  const days = values['expires-in-days'] === undefined ? undefined : parse(DaysSchema, values['expires-in-days'], 'expires-in-days');

  const config = loadServiceConfig();
  const { db, stores } = openServiceStores(config);
  try {
    const user = stores.users.getByEmail(email);
    if (!user) throw new Error(`no user with the email ${email}`);
    const expiresAt = days === undefined ? null : formatTimestamp(Date.now() + days * 24 * 60 * 60 * 1000);
    const token = stores.apiTokens.create(user.id, { description, expiresAt });
    process.stderr.write(`token ${token.id} for ${user.email}, ${expiresAt === null ? 'never expires' : `expires ${expiresAt}`}\n`);
    process.stdout.write(`${token.token}\n`);
  } finally {
    closeDatabase(db);
  }
});
