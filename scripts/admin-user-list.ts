// `npm run user:list`: every account in the database, with its state and how many API tokens it holds.
import { closeDatabase } from '../src/db.js';
import { loadServiceConfig, openExistingDatabase, parseCommandLine, runScript, UsageError } from './cli.js';
import { printable, printableJson } from './printable.js';

const USAGE = `Usage: npm run user:list [-- --json]

Lists every user in the database at DATABASE_PATH, oldest first: id, email, name, when it was
created, whether it is disabled (user:disable), and how many API tokens it holds (sign-in tokens
included). Never shows passwords or tokens. Safe while the service runs.

Options:
  --json      print a JSON array instead of a table
  -h, --help  show this help
`;

runScript(USAGE, () => {
  const { values, positionals } = parseCommandLine(USAGE, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const { db, admin } = openExistingDatabase(loadServiceConfig());
  try {
    const users = admin.listUsers();
    if (values.json) {
      process.stdout.write(`${printableJson(JSON.stringify(users, null, 2))}\n`);
      return;
    }
    if (users.length === 0) {
      process.stdout.write('no users yet (create one with: npm run user:create -- --email <email> --name <name>)\n');
      return;
    }
    const rows = [
      ['ID', 'EMAIL', 'NAME', 'CREATED', 'STATE', 'TOKENS'],
      ...users.map((user) => [
        user.id,
        user.email,
        printable(user.name),
        user.createdAt.slice(0, 19).replace('T', ' '),
        user.disabledAt ? 'disabled' : 'active',
        String(user.tokens),
      ]),
    ];
    const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
    const lines = rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  '));
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    closeDatabase(db);
  }
});
