// A start makes its writes in one step, `becomePrimary`: until it is called the app serves reads from
// a database it may not write (so a read-only start, such as a replica's, is possible), and the
// step does what a start owes the last run: runs left under way are marked failed, documents left
// mid-ingestion are queued again.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app.js';
import { closeDatabase, openDatabase } from '../src/db.js';
import { createHttpServer } from '../src/server.js';
import { silentLogger } from '../src/lib/log.js';
import { createClient, startService, waitFor } from './helpers.js';

test('an app on a database it may not write starts and serves reads; becomePrimary then sweeps what the last run left', async () => {
  const service = await startService();
  const { token, user } = await service.signUp('Primary');
  const tag = await service.createTag(token);
  const agent = await service.createAgent(token);
  const document = await service.createDocument(token, { type: 'TXT', url: 'http://127.0.0.1:9/never.txt' });
  // What a process killed mid-way leaves: a run under way and a document mid-ingestion.
  service.db
    .prepare(
      `INSERT INTO agent_runs (id, user_id, agent_id, status, input, model, started_at) VALUES ('left-running', ?, ?, 'running', 'x', 'm', '2026-01-01T00:00:00.000000+00:00')`,
    )
    .run(user.id, agent.id);
  service.db.prepare(`UPDATE documents SET status = 'processing' WHERE id = ?`).run(document.id);

  // A second start on the same file, on a connection that refuses every write (even one that
  // changes no row), with ingestion on.
  const db = openDatabase(service.config.databasePath);
  db.pragma('query_only = ON');
  const config = { ...service.config, ingestion: { ...service.config.ingestion, enabled: true } };
  const app = createApp({ db, config, secretKey: randomBytes(32), log: silentLogger });
  const server = createHttpServer(app, config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await app.stopBackgroundWork();
    closeDatabase(db);
  });
  const second = createClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);

  assert.equal((await second.request('GET', '/healthz')).status, 200);
  assert.deepEqual(
    (await second.listAll(token, '/tags')).map((each) => each.id),
    [tag.id],
  );
  const before = await second.request('GET', '/api/v1/runs/left-running', { token });
  assert.equal(before.status, 200);
  assert.equal(before.body.data.status, 'running', 'nothing was swept before becoming primary');
  assert.equal((await second.request('GET', `/api/v1/documents/${document.id}`, { token })).body.data.status, 'processing');

  db.pragma('query_only = OFF');
  app.becomePrimary();
  const after_ = await second.request('GET', '/api/v1/runs/left-running', { token });
  assert.equal(after_.body.data.status, 'failed');
  assert.match(after_.body.data.error, /interrupted/);
  // Queued again, fetched from a port that refuses: the ingestion ran and failed.
  await waitFor('the document re-ingested', async () => {
    const reply = await second.request('GET', `/api/v1/documents/${document.id}`, { token });
    return reply.body.data.status === 'failed' || undefined;
  });
});
