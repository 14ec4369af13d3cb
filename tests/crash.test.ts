// Crash safety: the real process is killed with SIGKILL while concurrent clients are writing;
// started again on the same file, it still has every record it acknowledged with a 2xx, and SQLite
// finds the file intact.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { waitFor } from './helpers.js';
import { startServiceProcess, type ServiceProcess } from './run-script.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-crash-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const databasePath = join(dir, 'service.db');

/** How long the clients write before the process is killed. */
const LOAD_MS = 700;
const CLIENTS = 8;

interface Acknowledged {
  resource: 'tools' | 'tags';
  id: string;
  name: string;
  token: string;
}

/** Every record of `resource` the token's user has, read page by page: id → name. */
async function namesById(service: ServiceProcess, resource: string, token: string): Promise<Map<string, string>> {
  return new Map((await service.listAll(token, `/${resource}?limit=1000`)).map((record) => [record.id, record.name]));
}

describe('crash safety: SIGKILL under concurrent writes', () => {
  test(`every record acknowledged with a 2xx survives a SIGKILL after at least ${LOAD_MS} ms of ${CLIENTS} concurrent writers`, async (t) => {
    const first = await startServiceProcess({ DATABASE_PATH: databasePath });
    // Two users, signed up at the production scrypt cost (a few hundred ms each).
    const tokens = [(await first.signUp()).token, (await first.signUp()).token];

    const acknowledged: Acknowledged[] = [];
    const unexpected: string[] = [];
    let inFlight = 0;
    let killed = false;
    let failedInFlight = 0;

    /** One client: alternately creates a tool and a tag with unique names until the server is gone. */
    async function client(index: number): Promise<void> {
      const token = tokens[index % tokens.length];
      for (let n = 0; ; n += 1) {
        const resource = n % 2 === 0 ? 'tools' : 'tags';
        const name = `crash ${index}-${n}`;
        const body = resource === 'tools' ? { name, type: 'SEARCH', metadata: { n } } : { name, color: '#123abc' };
        inFlight += 1;
        let reply;
        try {
          reply = await first.request('POST', `/api/v1/${resource}`, { token, body });
        } catch {
          // The connection died with the process: this write was never acknowledged.
          if (killed) failedInFlight += 1;
          else unexpected.push(`${resource} ${name}: request failed before the kill`);
          return;
        } finally {
          inFlight -= 1;
        }
        if (reply.status >= 200 && reply.status < 300) {
          acknowledged.push({ resource, id: reply.body.data.id, name: reply.body.data.name, token });
        } else {
          unexpected.push(`${resource} ${name}: ${reply.status} ${JSON.stringify(reply.body)}`);
        }
      }
    }

    const clients = Array.from({ length: CLIENTS }, (_, index) => client(index));
    await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
    // On a loaded machine 700 ms may not be enough for the writers to get going: wait (boundedly)
    // for a few acknowledged writes per client, so the kill always lands in the middle of the load.
    await waitFor(
      'acknowledged writes before the kill',
      () => acknowledged.length >= 2 * CLIENTS || unexpected.length > 0 || undefined,
      10_000,
    );
    const inFlightAtKill = inFlight;
    killed = true;
    first.child.kill('SIGKILL');
    await Promise.all(clients);
    await first.exited;

    assert.equal(first.child.signalCode, 'SIGKILL');
    assert.deepEqual(unexpected, [], 'before the kill every write is a 2xx');
    assert.ok(acknowledged.length >= CLIENTS, `only ${acknowledged.length} writes were acknowledged before the kill`);
    assert.ok(inFlightAtKill > 0, 'the kill lands while requests are in flight');
    assert.ok(failedInFlight > 0, 'some writes were cut off by the kill');
    t.diagnostic(`${acknowledged.length} writes acknowledged, ${failedInFlight} cut off by the kill`);

    const second = await startServiceProcess({ DATABASE_PATH: databasePath });
    const lost: string[] = [];
    for (const token of tokens) {
      for (const resource of ['tools', 'tags'] as const) {
        const stored = await namesById(second, resource, token);
        for (const record of acknowledged.filter((entry) => entry.token === token && entry.resource === resource)) {
          if (stored.get(record.id) !== record.name) lost.push(`${resource}/${record.id} (${record.name})`);
        }
      }
    }
    assert.deepEqual(lost, [], `of ${acknowledged.length} acknowledged records, these are missing after the restart`);

    // The lists agree with the records read one by one.
    for (const record of [acknowledged[0], acknowledged[acknowledged.length - 1]]) {
      const one = await second.request('GET', `/api/v1/${record.resource}/${record.id}`, { token: record.token });
      assert.equal(one.status, 200, JSON.stringify(one.body));
      assert.equal(one.body.data.name, record.name);
    }

    assert.equal(await second.stop(), 0, `stderr: ${second.stderrText()}`);

    const db = new Database(databasePath, { readonly: true });
    try {
      assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
      assert.deepEqual(db.pragma('foreign_key_check'), []);
    } finally {
      db.close();
    }
  });
});
