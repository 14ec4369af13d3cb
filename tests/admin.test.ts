// The admin scripts as an operator runs them (processes against DATABASE_PATH, the production scrypt
// cost): user:create, user:reset-password, token:create, db:stats. Passwords never appear in output.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDatabase, openDatabase, SCHEMA_VERSION } from '../src/db.js';
import { loadConfig, SETTINGS } from '../src/config.js';
import { createUserStore } from '../src/users/store.js';
import { createApiTokenStore } from '../src/api-tokens/store.js';
import { verifyPassword } from '../src/auth/password.js';
import { runCommand, runScript, root, type ScriptResult } from './run-script.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-admin-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const databasePath = join(dir, 'data', 'service.db');
const env = { DATABASE_PATH: databasePath };

const PASSWORD = 'first secret passphrase';
const NEW_PASSWORD = 'second secret passphrase';

/** Opens the database the scripts wrote to, runs `read` and closes it again. */
function inDatabase<T>(read: (stores: { users: ReturnType<typeof createUserStore>; apiTokens: ReturnType<typeof createApiTokenStore> }) => T): T {
  const db = openDatabase(databasePath);
  try {
    return read({ users: createUserStore(db), apiTokens: createApiTokenStore(db) });
  } finally {
    closeDatabase(db);
  }
}

function assertNoPasswordIn(result: ScriptResult): void {
  for (const secret of [PASSWORD, NEW_PASSWORD, 'short']) {
    assert.equal(result.stdout.includes(secret), false, 'the password is not printed');
    assert.equal(result.stderr.includes(secret), false, 'the password is not printed');
  }
}

const tokensOf = (userId: string) => inDatabase(({ apiTokens }) => apiTokens.list(userId, { limit: 1000, afterSeq: 0 }).rows);

describe('user:create', () => {
  test('creates a user from --password, on a new database with its key file', async () => {
    const result = await runScript('scripts/admin-user-create.ts', ['--email', ' Ada@Example.com ', '--name', 'Ada', '--password', PASSWORD], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^created user [0-9a-f-]{36} <ada@example\.com>\n$/);
    assertNoPasswordIn(result);
    assert.ok(existsSync(`${databasePath}.key`), 'the key file is made as the service would');
    const user = inDatabase(({ users }) => users.getByEmail('ada@example.com'));
    assert.equal(user?.name, 'Ada');
    assert.match(user!.passwordHash, /^\$scrypt\$ln=15,r=8,p=3\$/, 'the configured production cost');
    assert.equal(await verifyPassword(PASSWORD, user!.passwordHash), true);
  });

  test('reads the password from standard input (one trailing newline dropped)', async () => {
    const result = await runScript('scripts/admin-user-create.ts', ['--email', 'bob@example.com', '--name', 'Bob'], env, `${PASSWORD}\n`);
    assert.equal(result.code, 0, result.stderr);
    assertNoPasswordIn(result);
    const user = inDatabase(({ users }) => users.getByEmail('bob@example.com'));
    assert.equal(await verifyPassword(PASSWORD, user!.passwordHash), true);
  });

  test('an email already registered (in any case) is refused', async () => {
    const result = await runScript('scripts/admin-user-create.ts', ['--email', 'ADA@example.com', '--name', 'Ada 2', '--password', PASSWORD], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /already exists/);
  });

  test('sign-up rules apply, naming each bad field and never echoing the password', async () => {
    const result = await runScript('scripts/admin-user-create.ts', ['--email', 'not-an-email', '--name', 'X', '--password', 'short'], env);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /email: must be a valid email address/);
    assert.match(result.stderr, /password: must be at least 8 characters/);
    assertNoPasswordIn(result);
  });

  test('no password anywhere, a missing option or an unknown one: usage errors', async () => {
    const noPassword = await runScript('scripts/admin-user-create.ts', ['--email', 'c@example.com', '--name', 'C'], env, '');
    assert.equal(noPassword.code, 2);
    assert.match(noPassword.stderr, /no password/);
    const noName = await runScript('scripts/admin-user-create.ts', ['--email', 'c@example.com'], env);
    assert.equal(noName.code, 2);
    assert.match(noName.stderr, /--name is required[\s\S]*Usage: npm run user:create/);
    const unknown = await runScript('scripts/admin-user-create.ts', ['--emial', 'c@example.com'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown option '--emial'/);
  });
});

describe('token:create', () => {
  test('prints only the token on stdout; it is the user\'s and works like any other', async () => {
    const result = await runScript('scripts/admin-token-create.ts', ['--email', 'ada@example.com', '--description', 'ci deploys'], env);
    assert.equal(result.code, 0, result.stderr);
    const token = result.stdout.trim();
    assert.match(result.stdout, /^ams_[A-Za-z0-9_-]{43}\n$/);
    assert.match(result.stderr, /never expires/);
    const caller = inDatabase(({ apiTokens }) => apiTokens.findCaller(token));
    assert.equal(caller?.email, 'ada@example.com');
    assert.equal(caller?.expiresAt, null);
    assert.deepEqual(tokensOf(caller!.id).map((row) => row.description), ['ci deploys']);
  });

  test('--expires-in-days sets the expiry; bad values and unknown users are refused', async () => {
    const result = await runScript('scripts/admin-token-create.ts', ['--email', 'ada@example.com', '--expires-in-days', '7'], env);
    assert.equal(result.code, 0, result.stderr);
    const caller = inDatabase(({ apiTokens }) => apiTokens.findCaller(result.stdout.trim()));
    const days = (Date.parse(caller!.expiresAt!) - Date.now()) / 86_400_000;
    assert.ok(days > 6.99 && days <= 7, `expires in ${days} days`);

    const zero = await runScript('scripts/admin-token-create.ts', ['--email', 'ada@example.com', '--expires-in-days', '0'], env);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /expires-in-days: must be at least 1/);
    const nobody = await runScript('scripts/admin-token-create.ts', ['--email', 'nobody@example.com'], env);
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /no user with the email nobody@example\.com/);
    assert.equal(nobody.stdout, '');
  });
});

describe('user:reset-password', () => {
  test('sets the new password from stdin and revokes every one of the user\'s tokens, no one else\'s', async () => {
    const ada = inDatabase(({ users }) => users.getByEmail('ada@example.com'))!;
    const bob = inDatabase(({ users }) => users.getByEmail('bob@example.com'))!;
    assert.equal((await runScript('scripts/admin-token-create.ts', ['--email', 'bob@example.com'], env)).code, 0);
    assert.equal(tokensOf(ada.id).length, 2);

    const result = await runScript('scripts/admin-user-reset-password.ts', ['--email', 'ada@example.com'], env, NEW_PASSWORD);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /password of ada@example\.com changed; 2 API token\(s\) revoked/);
    assertNoPasswordIn(result);

    const changed = inDatabase(({ users }) => users.getByEmail('ada@example.com'))!;
    assert.equal(await verifyPassword(NEW_PASSWORD, changed.passwordHash), true);
    assert.equal(await verifyPassword(PASSWORD, changed.passwordHash), false);
    assert.equal(changed.name, 'Ada');
    assert.deepEqual(tokensOf(ada.id), []);
    assert.equal(tokensOf(bob.id).length, 1, "another user's tokens stay");
  });

  test('an unknown user or a too-short password changes nothing', async () => {
    const nobody = await runScript('scripts/admin-user-reset-password.ts', ['--email', 'nobody@example.com', '--password', NEW_PASSWORD], env);
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /no user with the email/);
    const short = await runScript('scripts/admin-user-reset-password.ts', ['--email', 'ada@example.com'], env, 'short');
    assert.equal(short.code, 2);
    assert.match(short.stderr, /password: must be at least 8 characters/);
    assertNoPasswordIn(short);
    const ada = inDatabase(({ users }) => users.getByEmail('ada@example.com'))!;
    assert.equal(await verifyPassword(NEW_PASSWORD, ada.passwordHash), true);
  });
});

describe('db:stats', () => {
  test('shows the schema version, rows per table and file sizes, as text and as JSON', async () => {
    const text = await runScript('scripts/admin-db-stats.ts', [], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`schema version +${SCHEMA_VERSION} \\(current\\)`));
    assert.match(text.stdout, /^ {2}users +2$/m);
    assert.match(text.stdout, /^ {2}api_tokens +1$/m);
    assert.match(text.stdout, /WAL file/);
    assert.match(text.stdout, /database file +\d/);

    const json = await runScript('scripts/admin-db-stats.ts', ['--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const stats = JSON.parse(json.stdout);
    assert.equal(stats.schemaVersion, SCHEMA_VERSION);
    assert.equal(stats.codeSchemaVersion, SCHEMA_VERSION);
    assert.equal(stats.rows.users, 2);
    assert.equal(stats.files.database, readFileSync(databasePath).length);
    assert.equal(stats.files.key, `${databasePath}.key`);
  });

  test('a missing database is reported, not created', async () => {
    const missing = join(dir, 'nowhere', 'none.db');
    const result = await runScript('scripts/admin-db-stats.ts', [], { DATABASE_PATH: missing });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no database at/);
    assert.equal(existsSync(missing), false);
  });
});

describe('every operator script is an npm script with --help', () => {
  const scripts = ['backup', 'restore', 'user:create', 'user:reset-password', 'token:create', 'db:stats'];

  test('package.json names each one, and `npm run -s <name> -- --help` prints its usage', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const results = await Promise.all(scripts.map((name) => runCommand(npm, ['run', '-s', name, '--', '--help'], env)));
    results.forEach((result, index) => {
      const name = scripts[index];
      assert.ok(pkg.scripts[name], `package.json has a "${name}" script`);
      assert.equal(result.code, 0, `${name}: ${result.stderr}`);
      assert.match(result.stdout, new RegExp(`^Usage: npm run (-s )?${name}\\b`), name);
    });
  });
});

describe('configuration is documented', () => {
  test('.env.example lists every setting src/config.ts reads, each with its real default', () => {
    // Each setting is a commented-out line `# NAME=default`.
    const settings = [...readFileSync(join(root, '.env.example'), 'utf8').matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)];
    const example = Object.fromEntries(settings.map(([, name, value]) => [name, value]));
    assert.deepEqual(Object.keys(example).sort(), [...SETTINGS].sort());
    assert.deepEqual(loadConfig(example), loadConfig({}), 'the values in .env.example are the defaults');
  });

  test('the README configuration table names every setting', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const missing = SETTINGS.filter((name) => !new RegExp(`^\\|[^\\n]*\`${name}\``, 'm').test(readme));
    assert.deepEqual(missing, []);
  });
});
