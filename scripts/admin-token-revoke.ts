// `npm run token:revoke`: revokes one API token by its id, or every token of a user; without either,
// lists the user's tokens to choose from.
import { closeDatabase } from '../src/db.js';
import { loadServiceConfig, openExistingDatabase, parseCommandLine, parseEmail, runScript, UsageError } from './cli.js';
import { printable } from './printable.js';

const USAGE = `Usage: npm run token:revoke -- --id <token-id>
       npm run token:revoke -- --email <email> --all
       npm run token:revoke -- --email <email>

Revokes API tokens in the database at DATABASE_PATH; a running service refuses them (401) from the
next request on. With --id, the one token with that id (whoever holds it); with --email and --all,
every token of that user (sign-in tokens included). With --email alone, lists the user's tokens
(id, description, created, expires, last used: never the token itself) and revokes nothing.

Options:
  --id <token-id>  the token's id (as in GET /api/v1/api-tokens, or the list above)
  --email <email>  the user whose tokens to list or, with --all, revoke
  --all            revoke every token of --email's user
  -h, --help       show this help
`;

runScript(USAGE, () => {
  const { values, positionals } = parseCommandLine(USAGE, { id: { type: 'string' }, email: { type: 'string' }, all: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  if (values.all && values.email === undefined) throw new UsageError('--all needs --email');
  if (values.id === undefined && values.email === undefined)
    throw new UsageError('give --id <token-id>, or --email <email> (with --all to revoke them all)');
  if (values.id !== undefined && (values.email !== undefined || values.all))
    throw new UsageError('--id goes alone, without --email or --all');
  const { db, admin } = openExistingDatabase(loadServiceConfig());
  try {
    if (values.id !== undefined) {
      const token = admin.findToken(values.id);
      if (!token || !admin.revokeToken(token.id)) throw new Error(`no API token with the id ${values.id}`);
      process.stdout.write(`revoked token ${token.id} ("${printable(token.description)}") of ${token.email}\n`);
      return;
    }
    const email = parseEmail(values.email!);
    const user = admin.findUserByEmail(email);
    if (!user) throw new Error(`no user with the email ${email}`);
    if (values.all) {
      const revoked = admin.revokeAllTokensOf(user.id);
      process.stdout.write(`revoked ${revoked} API token(s) of ${user.email}\n`);
      return;
    }
    const tokens = admin.listTokensOf(user.id);
    if (tokens.length === 0) {
      process.stdout.write(`${user.email} holds no API tokens\n`);
      return;
    }
    const rows = [
      ['ID', 'CREATED', 'EXPIRES', 'LAST USED', 'DESCRIPTION'],
      ...tokens.map((token) => [
        token.id,
        day(token.createdAt),
        token.expiresAt ? day(token.expiresAt) : 'never',
        token.lastUsedAt ? day(token.lastUsedAt) : 'never',
        printable(token.description),
      ]),
    ];
    const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
    process.stdout.write(
      `${rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ')).join('\n')}\n`,
    );
  } finally {
    closeDatabase(db);
  }
});

function day(timestamp: string): string {
  return timestamp.slice(0, 16).replace('T', ' ');
}
