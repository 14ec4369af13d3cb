// The database's storage failing under the running service: its file removed or replaced, or its
// disk full. Writes are answered 503 in the envelope (never acknowledged into a file that is gone,
// never a masked 500), /healthz says why, and a start on a full disk says "no space left".
import { after, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorOf, startService, type Reply, type TestService } from './helpers.js';
import { spawnServiceProcess } from './run-script.js';

/** Asserts a 503 with `code` in the envelope and a Retry-After header. */
function assertStorageError(reply: Reply, code: string, what: string): void {
  assert.equal(reply.status, 503, `${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  assert.equal(errorOf(reply).code, code, what);
  assert.match(reply.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${what}: Retry-After`);
}

/** The names of the caller's tags, every page. */
const tagNames = async (service: TestService, token: string) => (await service.listAll(token, '/tags')).map((tag) => tag.name).sort();

describe('writes once the database file is gone from its path', () => {
  for (const how of ['directory removed', 'file replaced'] as const) {
    test(`${how}: every write answers 503 storage_unavailable with Retry-After and stores nothing; reads and /healthz say so`, async () => {
      const service = await startService();
      const { token } = await service.signUp('Gone');
      const kept = await service.createTag(token, { name: 'before' });
      if (how === 'directory removed') {
        rmSync(service.dir, { recursive: true, force: true });
      } else {
        renameSync(service.config.databasePath, `${service.config.databasePath}.old`);
        writeFileSync(service.config.databasePath, '');
      }

      const writes: [string, string, unknown][] = [
        ['POST', '/api/v1/tags', { name: 'after', color: '#112233' }],
        ['PATCH', `/api/v1/tags/${kept.id}`, { name: 'renamed' }],
        ['DELETE', `/api/v1/tags/${kept.id}`, undefined],
        ['POST', '/api/v1/auth/sign-up', { name: 'Late', email: 'late@example.com', password: 'correct horse battery' }],
      ];
      for (const [method, path, body] of writes) {
        assertStorageError(await service.request(method, path, { token, body }), 'storage_unavailable', `${method} ${path}`);
      }
      assertStorageError(await service.request('GET', '/healthz'), 'storage_unavailable', '/healthz');
      // The open file still answers reads, and none of the refused writes reached it.
      assert.deepEqual(await tagNames(service, token), ['before']);
      await service.close();
    });
  }
});

/**
 * Mounts a tmpfs of `size` on a new directory, unmounted after the test file; skips the test (with
 * the reason) where mounting is not allowed (not root, or no CAP_SYS_ADMIN in a container).
 */
function mountSmallDisk(t: TestContext, size: string): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'ams-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const reason = String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim();
    t.skip(`mounting a small tmpfs is not allowed here (it needs root): ${reason}`);
    return undefined;
  }
  after(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the file system of `dir` to the last byte with a file `filler`; returns its path. */
function fillDisk(dir: string): string {
  const filler = join(dir, 'filler');
  try {
    writeFileSync(filler, Buffer.alloc(64 * 1024 * 1024));
    assert.fail('the 64 MiB filler fit on the small disk');
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
  }
  return filler;
}

describe('a full disk', () => {
  test('writes answer 503 storage_full with Retry-After, /healthz reports it until a write works again, and a start says "no space left"', async (t) => {
    const disk = mountSmallDisk(t, '4m');
    if (disk === undefined) return;
    const databasePath = join(disk, 'service.db');
    const service = await startService({ databasePath });
    const { token } = await service.signUp('Full');
    assert.equal((await service.request('GET', '/healthz')).status, 200);

    const filler = fillDisk(disk);
    // 100,000 characters of template: far more than any room left in the WAL file.
    const template = 'x'.repeat(100_000);
    const write = () => service.request('POST', '/api/v1/prompts', { token, body: { name: 'big', template, input_variables: [] } });
    assertStorageError(await write(), 'storage_full', 'a write on the full disk');
    assertStorageError(await service.request('GET', '/healthz'), 'storage_full', '/healthz on the full disk');
    assertStorageError(await service.request('GET', '/healthz'), 'storage_full', '/healthz asked again');
    const list = await service.request('GET', '/api/v1/prompts', { token });
    assert.equal(list.status, 200, 'reads still answer');
    assert.deepEqual(list.body.data, []);

    rmSync(filler);
    assert.equal((await service.request('GET', '/healthz')).status, 200, '/healthz once a write works again');
    assert.equal((await write()).status, 201);
    await service.close();

    // A start on the full disk: SQLite cannot make its shared-memory file, and says "disk I/O error".
    fillDisk(disk);
    const start = spawnServiceProcess({ DATABASE_PATH: databasePath });
    assert.equal(await start.exited, 1, start.stderrText());
    const last = start.stderrText().trimEnd().split('\n').at(-1) ?? '';
    assert.match(last, new RegExp(`^cannot start: DATABASE_PATH=${databasePath}: no space left on the device`));
  });
});
