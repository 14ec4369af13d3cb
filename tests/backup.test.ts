// `npm run backup` and `npm run restore` against the real service process: a backup taken while
// the service is being written to is whole and holds every write acknowledged before it began;
// restore refuses while the service runs, and afterwards puts the backup (and its key) in place.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, closeDatabase, SCHEMA_VERSION } from '../src/db.js';
import { createSealer, parseSecretKey } from '../src/lib/secrets.js';
import { runScript, startServiceProcess, type ServiceProcess } from './run-script.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-backup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const livePath = join(dir, 'live', 'service.db');
const backupPath = join(dir, 'backup.db');
const env = { DATABASE_PATH: livePath };

/** Every tag id the user has, following the list page by page. */
const allTagIds = async (service: ServiceProcess, token: string): Promise<string[]> =>
  (await service.listAll(token, '/tags?limit=1000')).map((tag) => tag.id);

const tagIdsIn = (path: string): Set<string> => {
  const db = new Database(path, { readonly: true });
  try {
    return new Set(db.prepare('SELECT id FROM tags').pluck().all() as string[]);
  } finally {
    db.close();
  }
};

describe('backup and restore around the running service', () => {
  let service: ServiceProcess;
  let token: string;
  let email: string;
  let password: string;
  let ackedBeforeBackup: string[] = [];
  let backupTagCount = 0;
  let liveTagCountAtRestore = 0;

  test('a backup taken during writes is whole and holds every write acknowledged before it started', async (t) => {
    service = await startServiceProcess(env);
    ({ token, email, password } = await service.signUp('Backup Owner'));

    // Some bulk (about a megabyte), and a secret that is sealed with the key.
    for (let i = 0; i < 20; i += 1) {
      const template = `${'x'.repeat(40_000)} {v}`;
      await service.createPrompt(token, { name: `bulk ${i}`, template, input_variables: ['v'] });
    }
    await service.createTool(token, { metadata: { apiKey: 'sk-kept-secret' } });

    // Four writers that keep creating tags until told to stop; `acked` holds each 201's id in order.
    const acked: string[] = [];
    let stop = false;
    let counter = 0;
    const writer = async () => {
      while (!stop) {
        acked.push((await service.createTag(token, { name: `tag ${counter++}` })).id);
      }
    };
    const writers = Promise.all([writer(), writer(), writer(), writer()]);
    while (acked.length < 100) await new Promise((resolve) => setTimeout(resolve, 10));

    ackedBeforeBackup = [...acked];
    const result = await runScript('scripts/backup.ts', [backupPath], env);
    const ackedDuringBackup = acked.length - ackedBeforeBackup.length;
    stop = true;
    await writers;

    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /integrity_check ok/);
    assert.ok(ackedDuringBackup > 0, 'the service kept acknowledging writes while the backup ran');

    const copy = new Database(backupPath, { readonly: true });
    assert.deepEqual(copy.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete', 'the backup is one self-contained file');
    assert.equal(copy.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.equal(copy.prepare('SELECT count(*) FROM prompts').pluck().get(), 20);
    const sealedMetadata = copy.prepare('SELECT metadata FROM tools').pluck().get() as string;
    copy.close();
    const inBackup = tagIdsIn(backupPath);
    const missing = ackedBeforeBackup.filter((id) => !inBackup.has(id));
    assert.deepEqual(missing, [], 'every tag acknowledged before the backup started is in it');
    backupTagCount = inBackup.size;
    t.diagnostic(
      `${ackedBeforeBackup.length} tags acknowledged before the backup, ${ackedDuringBackup} while it ran, ${backupTagCount} in the copy`,
    );

    // The key file travels with it, owner-only, and opens the sealed secrets in the copy.
    assert.equal(statSync(backupPath).mode & 0o777, 0o600);
    assert.equal(statSync(`${backupPath}.key`).mode & 0o777, 0o600);
    assert.equal(readFileSync(`${backupPath}.key`, 'utf8'), readFileSync(`${livePath}.key`, 'utf8'));
    const key = parseSecretKey(readFileSync(`${backupPath}.key`, 'utf8'))!;
    assert.deepEqual(JSON.parse(createSealer(key).open(sealedMetadata)), { apiKey: 'sk-kept-secret' });
    assert.deepEqual(readdirSync(dir).sort(), ['backup.db', 'backup.db.key', 'live'], 'no partial files are left behind');
  });

  test('a second backup to the same file is refused without --force', async () => {
    const result = await runScript('scripts/backup.ts', [backupPath], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /exists; pass --force/);
  });

  test('restore refuses while the service runs, and changes nothing', async () => {
    liveTagCountAtRestore = (await allTagIds(service, token)).length;
    assert.ok(liveTagCountAtRestore > backupTagCount, 'the live database has moved on since the backup');

    const result = await runScript('scripts/restore.ts', [backupPath], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /is in use: stop the service/);
    assert.equal((await allTagIds(service, token)).length, liveTagCountAtRestore, 'the service still serves its own data');
    assert.equal(
      readdirSync(join(dir, 'live')).some((name) => name.includes('before-restore') || name.includes('partial')),
      false,
    );
  });

  test('after the service stops, restore puts the backup and its key in place and keeps the old files aside', async () => {
    assert.equal(await service.stop(), 0);
    // As if the machine had been rebuilt with a new key: restore must bring the backup's key back.
    const replacedKey = `${randomBytes(32).toString('hex')}\n`;
    writeFileSync(`${livePath}.key`, replacedKey, { mode: 0o600 });

    const result = await runScript('scripts/restore.ts', [backupPath], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /restored .*backup\.db to/);

    const aside = readdirSync(join(dir, 'live')).filter((name) => name.startsWith('service.db.before-restore-'));
    const asideDb = aside.find((name) => !name.endsWith('.key') && !name.endsWith('-wal') && !name.endsWith('-shm'));
    assert.ok(asideDb, `the old database is kept aside: ${aside.join(', ')}`);
    assert.ok(aside.includes(`${asideDb}.key`), 'the old key is kept aside');
    assert.equal(readFileSync(join(dir, 'live', `${asideDb}.key`), 'utf8'), replacedKey);
    assert.equal(tagIdsIn(join(dir, 'live', asideDb!)).size, liveTagCountAtRestore, 'the replaced database is whole');
    assert.equal(readFileSync(`${livePath}.key`, 'utf8'), readFileSync(`${backupPath}.key`, 'utf8'));
    assert.equal(statSync(livePath).mode & 0o777, 0o600);
    assert.equal(statSync(`${livePath}.key`).mode & 0o777, 0o600);

    // The service starts on the restored file and serves exactly what the backup held.
    service = await startServiceProcess(env);
    const restoredToken = await service.signIn(email, password);
    assert.equal((await allTagIds(service, restoredToken)).length, backupTagCount);
    assert.equal(await service.stop(), 0);
  });
});

describe('restore checks the backup before touching anything', () => {
  const checkDir = mkdtempSync(join(tmpdir(), 'ams-restore-'));
  after(() => rmSync(checkDir, { recursive: true, force: true }));
  const live = join(checkDir, 'live.db');
  const checkEnv = { DATABASE_PATH: live };

  test('a backup without its key file is refused unless --no-key', async () => {
    closeDatabase(openDatabase(join(checkDir, 'keyless.db')));
    const refused = await runScript('scripts/restore.ts', [join(checkDir, 'keyless.db')], checkEnv);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /no key file beside the backup.*--no-key/s);
    assert.equal(existsSync(live), false);

    const restored = await runScript('scripts/restore.ts', [join(checkDir, 'keyless.db'), '--no-key'], checkEnv);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /there was no database to replace/);
    assert.equal(existsSync(live), true);
  });

  test('a backup from a newer release is refused, naming both versions', async () => {
    const newer = join(checkDir, 'newer.db');
    const db = openDatabase(newer);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    closeDatabase(db);
    const before = readFileSync(live);
    const refused = await runScript('scripts/restore.ts', [newer, '--no-key'], checkEnv);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this code's ${SCHEMA_VERSION}`));
    assert.deepEqual(readFileSync(live), before);
  });

  test('a file that is not a database is refused', async () => {
    writeFileSync(join(checkDir, 'junk.db'), 'not a database at all, just some text that is long enough to have a header');
    const refused = await runScript('scripts/restore.ts', [join(checkDir, 'junk.db'), '--no-key'], checkEnv);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /not an SQLite database|cannot be opened|not a database/);
  });

  test('usage errors exit 2 with the usage text; --help exits 0', async () => {
    const none = await runScript('scripts/restore.ts', [], checkEnv);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /Usage: npm run restore/);
    const help = await runScript('scripts/backup.ts', ['--help'], checkEnv);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: npm run backup -- <file>/);
  });
});
