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
import { runCommand, runScript, root, startServiceProcess, type ScriptResult, type ServiceProcess } from './run-script.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-admin-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const databasePath = join(dir, 'data', 'service.db');
const env = { DATABASE_PATH: databasePath };

const PASSWORD = 'first secret passphrase';
const NEW_PASSWORD = 'second secret passphrase';

/** Opens the database the scripts wrote to, runs `read` and closes it again. */
function inDatabase<T>(
  read: (stores: { users: ReturnType<typeof createUserStore>; apiTokens: ReturnType<typeof createApiTokenStore> }) => T,
): T {
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
    const result = await runScript(
      'scripts/admin-user-create.ts',
      ['--email', ' Ada@Example.com ', '--name', 'Ada', '--password', PASSWORD],
      env,
    );
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
    const result = await runScript(
      'scripts/admin-user-create.ts',
      ['--email', 'ADA@example.com', '--name', 'Ada 2', '--password', PASSWORD],
      env,
    );
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
  test("prints only the token on stdout; it is the user's and works like any other", async () => {
    const result = await runScript('scripts/admin-token-create.ts', ['--email', 'ada@example.com', '--description', 'ci deploys'], env);
    assert.equal(result.code, 0, result.stderr);
    const token = result.stdout.trim();
    assert.match(result.stdout, /^ams_[A-Za-z0-9_-]{43}\n$/);
    assert.match(result.stderr, /never expires/);
    const caller = inDatabase(({ apiTokens }) => apiTokens.findCaller(token));
    assert.equal(caller?.email, 'ada@example.com');
    assert.equal(caller?.expiresAt, null);
    assert.deepEqual(
      tokensOf(caller!.id).map((row) => row.description),
      ['ci deploys'],
    );
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
  test("sets the new password from stdin and revokes every one of the user's tokens, no one else's", async () => {
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
    const nobody = await runScript(
      'scripts/admin-user-reset-password.ts',
      ['--email', 'nobody@example.com', '--password', NEW_PASSWORD],
      env,
    );
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
    // The full-text index is one table here, not its shadow tables (_data, _idx, _config, _docsize).
    assert.match(text.stdout, /^ {2}document_chunks_fts +\d+$/m);
    assert.doesNotMatch(text.stdout, /_fts_(data|idx|config|docsize|content)\b/);
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

/** A JSON request to a running service; returns the status and the parsed body. */
async function call(url: string, method: string, path: string, options: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}/api/v1${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('account administration against a running service', () => {
  let service: ServiceProcess;
  const carol = { email: 'carol@example.com', password: 'carol passphrase long' };

  test('start the service with SIGN_UP=off: sign-up is 403, user:create still makes accounts', async () => {
    service = await startServiceProcess({ DATABASE_PATH: databasePath, SIGN_UP: 'off' });
    const refused = await call(service.url, 'POST', '/auth/sign-up', {
      body: { name: 'Mallory', email: 'mallory@example.com', password: 'mallory passphrase' },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'forbidden');
    assert.match(refused.body.error.message, /Sign-up is closed/);
    const created = await runScript(
      'scripts/admin-user-create.ts',
      ['--email', carol.email, '--name', 'Carol', '--password', carol.password],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal((await call(service.url, 'POST', '/auth/sign-in', { body: carol })).status, 200);
  });

  test('user:list shows every user, its state and token count, never a password or token', async () => {
    const text = await runScript('scripts/admin-user-list.ts', [], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^ID +EMAIL +NAME +CREATED +STATE +TOKENS$/m);
    assert.match(text.stdout, /^[0-9a-f-]{36} +carol@example\.com +Carol +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +active +1$/m);
    assert.doesNotMatch(text.stdout, /\$scrypt\$|ams_/);
    const json = await runScript('scripts/admin-user-list.ts', ['--json'], env);
    const users = JSON.parse(json.stdout) as { email: string; disabledAt: string | null; tokens: number }[];
    assert.deepEqual(
      users.map((user) => user.email),
      ['ada@example.com', 'bob@example.com', 'carol@example.com'],
    );
    assert.equal(users[2].disabledAt, null);
  });

  test("user:disable: the user's tokens stop working and sign-in answers 401; user:enable undoes it", async () => {
    const token = (await call(service.url, 'POST', '/auth/sign-in', { body: carol })).body.data.token as string;
    assert.equal((await call(service.url, 'GET', '/auth/me', { token })).status, 200);
    const ada = (await runScript('scripts/admin-token-create.ts', ['--email', 'ada@example.com'], env)).stdout.trim();
    assert.equal((await call(service.url, 'GET', '/auth/me', { token: ada })).status, 200);

    const disabled = await runScript('scripts/admin-user-disable.ts', ['--email', 'Carol@Example.com'], env);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal(disabled.stdout, 'carol@example.com disabled\n');
    assert.equal((await call(service.url, 'GET', '/auth/me', { token })).status, 401, 'the running service refuses the token at once');
    const signIn = await call(service.url, 'POST', '/auth/sign-in', { body: carol });
    assert.equal(signIn.status, 401);
    const wrong = await call(service.url, 'POST', '/auth/sign-in', { body: { ...carol, password: 'not the password' } });
    assert.equal(wrong.status, 401);
    assert.equal(signIn.body.error.message, wrong.body.error.message, 'the right password on a disabled account answers like a wrong one');
    assert.equal((await call(service.url, 'GET', '/auth/me', { token: ada })).status, 200, 'other users are untouched');
    assert.match((await runScript('scripts/admin-user-list.ts', [], env)).stdout, /carol@example\.com .* disabled +\d+$/m);
    assert.equal(
      (await runScript('scripts/admin-user-disable.ts', ['--email', carol.email], env)).stdout,
      'carol@example.com was already disabled\n',
    );

    const enabled = await runScript('scripts/admin-user-enable.ts', ['--email', carol.email], env);
    assert.equal(enabled.code, 0, enabled.stderr);
    assert.equal((await call(service.url, 'GET', '/auth/me', { token })).status, 200, 'the token works again');
    assert.equal((await call(service.url, 'POST', '/auth/sign-in', { body: carol })).status, 200);
    const nobody = await runScript('scripts/admin-user-disable.ts', ['--email', 'nobody@example.com'], env);
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /no user with the email nobody@example\.com/);
  });

  test("token:revoke: lists a user's tokens, revokes one by id, or all of them", async () => {
    const kept = (
      await runScript('scripts/admin-token-create.ts', ['--email', carol.email, '--description', 'kept for now'], env)
    ).stdout.trim();
    const doomed = (
      await runScript('scripts/admin-token-create.ts', ['--email', carol.email, '--description', 'leaked'], env)
    ).stdout.trim();
    const listed = await runScript('scripts/admin-token-revoke.ts', ['--email', carol.email], env);
    assert.equal(listed.code, 0, listed.stderr);
    const line = listed.stdout.split('\n').find((row) => row.endsWith('leaked'));
    assert.ok(line, listed.stdout);
    assert.doesNotMatch(listed.stdout, /ams_/, 'never the token itself');
    const id = line.split(/\s+/)[0];

    const revoked = await runScript('scripts/admin-token-revoke.ts', ['--id', id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `revoked token ${id} ("leaked") of carol@example.com\n`);
    assert.equal((await call(service.url, 'GET', '/auth/me', { token: doomed })).status, 401);
    assert.equal((await call(service.url, 'GET', '/auth/me', { token: kept })).status, 200);
    const again = await runScript('scripts/admin-token-revoke.ts', ['--id', id], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no API token with the id/);

    const all = await runScript('scripts/admin-token-revoke.ts', ['--email', carol.email, '--all'], env);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /^revoked [1-9]\d* API token\(s\) of carol@example\.com\n$/);
    assert.equal((await call(service.url, 'GET', '/auth/me', { token: kept })).status, 401);
    assert.equal(
      (await runScript('scripts/admin-token-revoke.ts', ['--email', carol.email], env)).stdout,
      'carol@example.com holds no API tokens\n',
    );
    const usage = await runScript('scripts/admin-token-revoke.ts', ['--all'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--all needs --email/);
  });

  test('user:delete asks first: anything but yes keeps the user; yes (or --yes) deletes it with its data', async () => {
    const token = (await call(service.url, 'POST', '/auth/sign-in', { body: carol })).body.data.token as string;
    assert.equal((await call(service.url, 'POST', '/tags', { token, body: { name: 'mine', color: '#000000' } })).status, 201);

    for (const answer of ['no\n', '', 'maybe\n']) {
      const kept = await runScript('scripts/admin-user-delete.ts', ['--email', carol.email], env, answer);
      assert.equal(kept.code, 1, kept.stderr);
      assert.match(kept.stderr, /owns: .*1 tags/);
      assert.match(kept.stderr, /not deleted/);
      assert.equal((await call(service.url, 'GET', '/auth/me', { token })).status, 200);
    }
    const deleted = await runScript('scripts/admin-user-delete.ts', ['--email', carol.email], env, 'yes\n');
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /^deleted user [0-9a-f-]{36} <carol@example\.com> and everything it owned\n$/);
    assert.equal((await call(service.url, 'GET', '/auth/me', { token })).status, 401);
    assert.equal(
      inDatabase(({ users }) => users.getByEmail(carol.email)),
      undefined,
    );

    const dave = await runScript(
      'scripts/admin-user-create.ts',
      ['--email', 'dave@example.com', '--name', 'Dave', '--password', PASSWORD],
      env,
    );
    assert.equal(dave.code, 0, dave.stderr);
    const yes = await runScript('scripts/admin-user-delete.ts', ['--email', 'dave@example.com', '--yes'], env);
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal(
      inDatabase(({ users }) => users.getByEmail('dave@example.com')),
      undefined,
    );
    const nobody = await runScript('scripts/admin-user-delete.ts', ['--email', 'dave@example.com', '--yes'], env);
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /no user with the email dave@example\.com/);
    assert.equal(await service.stop(), 0);
  });
});

describe('every operator script is an npm script with --help', () => {
  const scripts = [
    'backup',
    'restore',
    'user:create',
    'user:reset-password',
    'user:list',
    'user:delete',
    'user:disable',
    'user:enable',
    'token:create',
    'token:revoke',
    'db:stats',
  ];

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
