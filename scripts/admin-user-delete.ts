// `npm run user:delete`: deletes an account and everything it owns, after the operator confirms.
import { closeDatabase } from '../src/db.js';
import { confirm, loadServiceConfig, openExistingDatabase, parseCommandLine, parseEmail, runScript, UsageError } from './cli.js';

const USAGE = `Usage: npm run user:delete -- --email <email> [--yes]

Deletes the user with this email from the database at DATABASE_PATH, with everything the user owns:
agents, prompts, tags, tools, documents (their text is swept in the background by the running
service, or after its next start), links and API tokens. This cannot be undone: take a backup first
(npm run backup -- <file>). It shows what will be deleted and asks for "yes" on standard input
(a terminal or a pipe) unless --yes is given. The service may keep running meanwhile.

Options:
  --email <email>  the user's email
  --yes            do not ask for confirmation
  -h, --help       show this help
`;

runScript(USAGE, async () => {
  const { values, positionals } = parseCommandLine(USAGE, { email: { type: 'string' }, yes: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  if (values.email === undefined) throw new UsageError('--email is required');
  const email = parseEmail(values.email);
  const { db, admin } = openExistingDatabase(loadServiceConfig());
  try {
    const user = admin.findUserByEmail(email);
    if (!user) throw new Error(`no user with the email ${email}`);
    const owned = Object.entries(admin.countOwnedRecords(user.id)).map(([table, rows]) => `${rows} ${table}`);
    process.stderr.write(`user ${user.id} <${user.email}> owns: ${owned.length > 0 ? owned.join(', ') : 'nothing'}\n`);
    if (!values.yes && !(await confirm(`Delete ${user.email} and all of it?`))) {
      process.stderr.write('not deleted\n');
      process.exitCode = 1;
      return;
    }
    if (!admin.deleteUser(user.id)) throw new Error(`no user with the email ${email}`);
    process.stdout.write(`deleted user ${user.id} <${user.email}> and everything it owned\n`);
  } finally {
    closeDatabase(db);
  }
});
