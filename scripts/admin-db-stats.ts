// `npm run db:stats`: what is in the database file, read-only: schema version, rows per table, file
// sizes (database, WAL, shared memory, key). Safe while the service runs.
import Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { SCHEMA_VERSION, schemaVersionOf } from '../src/db.js';
import { loadServiceConfig, parseCommandLine, runScript, UsageError } from './cli.js';

const USAGE = `Usage: npm run db:stats [-- --json]

Shows the database at DATABASE_PATH without changing it: its schema version (and this code's),
the rows in each table, and the sizes of the database file, its write-ahead log (-wal), the
shared-memory file (-shm) and the key file. Safe to run while the service is running.

Options:
  --json      print one JSON object instead of text
  -h, --help  show this help
`;

const sizeOf = (path: string): number | null => (existsSync(path) ? statSync(path).size : null);

function formatBytes(bytes: number | null): string {
  if (bytes === null) return 'absent';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]} (${bytes} B)`;
}

runScript(USAGE, () => {
  const { values, positionals } = parseCommandLine(USAGE, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const config = loadServiceConfig();
  const path = config.databasePath;
  if (!existsSync(path)) throw new Error(`no database at ${path} (DATABASE_PATH); the service creates it on first start`);

  // Without migrating, and query_only: looking must not change anything. (Not `readonly`: a
  // read-only connection cannot remove the -wal and -shm files it needs when it is the last one.)
  const db = new Database(path, { fileMustExist: true });
  let stats;
  try {
    db.pragma('query_only = ON');
    db.pragma('busy_timeout = 5000');
    const tableNames = db
      // Tables and virtual tables (the full-text index), not the shadow tables SQLite keeps for the index.
      .prepare(
        `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'virtual') AND name NOT LIKE 'sqlite_%' ORDER BY name`,
      )
      .pluck()
      .all() as string[];
    const rows = Object.fromEntries(
      // Names come from sqlite_master, quoted as identifiers: not client input.
      tableNames.map((name) => [
        name,
        db
          .prepare(`SELECT count(*) FROM "${name.replaceAll('"', '""')}"`)
          .pluck()
          .get() as number,
      ]),
    );
    stats = {
      database: path,
      schemaVersion: schemaVersionOf(db),
      codeSchemaVersion: SCHEMA_VERSION,
      journalMode: db.pragma('journal_mode', { simple: true }) as string,
      pageSize: db.pragma('page_size', { simple: true }) as number,
      pageCount: db.pragma('page_count', { simple: true }) as number,
      freePages: db.pragma('freelist_count', { simple: true }) as number,
      files: {
        database: sizeOf(path),
        wal: sizeOf(`${path}-wal`),
        shm: sizeOf(`${path}-shm`),
        key: config.secretKey ? 'SECRET_KEY (environment)' : existsSync(`${path}.key`) ? `${path}.key` : null,
      },
      rows,
    };
  } finally {
    db.close();
  }

  if (values.json) {
    process.stdout.write(`${JSON.stringify(stats, null, 2)}\n`);
    return;
  }
  const versionNote =
    stats.schemaVersion === stats.codeSchemaVersion
      ? 'current'
      : stats.schemaVersion < stats.codeSchemaVersion
        ? `this code's is ${stats.codeSchemaVersion}: upgraded at the next start`
        : `NEWER than this code's ${stats.codeSchemaVersion}: this release refuses to start on it`;
  const width = Math.max(...Object.keys(stats.rows).map((name) => name.length), 8);
  const lines = [
    `database        ${stats.database}`,
    `schema version  ${stats.schemaVersion} (${versionNote})`,
    `journal mode    ${stats.journalMode}`,
    `database file   ${formatBytes(stats.files.database)}: ${stats.pageCount} pages of ${stats.pageSize} B, ${stats.freePages} free`,
    `WAL file        ${formatBytes(stats.files.wal)}`,
    `shm file        ${formatBytes(stats.files.shm)}`,
    `secret key      ${stats.files.key ?? 'absent (created on the next start)'}`,
    '',
    'rows per table',
    ...Object.entries(stats.rows).map(([name, count]) => `  ${name.padEnd(width)}  ${count}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
});
