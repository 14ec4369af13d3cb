// The real process with an event stream open: SIGTERM ends the stream with an `error` event, marks
// the run failed and exits without waiting for the shutdown deadline.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startServiceProcess } from './run-script.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-runs-process-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('SIGTERM ends an open stream with an error event, marks its run failed and exits 0 at once', async () => {
  const fake = await startFakeOpenAI();
  const databasePath = join(dir, 'service.db');
  const service = await startServiceProcess({ DATABASE_PATH: databasePath, ALLOW_PRIVATE_NETWORKS: 'on', SHUTDOWN_TIMEOUT_MS: '60000' });
  const email = 'streamer@example.com';
  const password = 'correct horse battery';
  assert.equal((await service.request('POST', '/api/v1/auth/sign-up', { body: { email, password } })).status, 201);
  const { token } = (await service.request('POST', '/api/v1/auth/sign-in', { body: { email, password } })).body.data;
  const agent = await service.request('POST', '/api/v1/agents', {
    token,
    body: { name: 'a', type: 'VENDOR_A', llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url } },
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));

  fake.reply({ hangAfter: ['thinking '] });
  const response = await fetch(`${service.url}/api/v1/agents/${agent.body.data.id}/invoke`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'hi', stream: true }),
  });
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('event: token')) text += Buffer.from((await reader.read()).value!).toString();

  const started = Date.now();
  const stopped = service.stop();
  for (let part = await reader.read(); !part.done; part = await reader.read()) text += Buffer.from(part.value).toString();
  assert.match(text, /event: error\ndata: \{"code":"unavailable"[^\n]*\n\n$/);
  assert.equal(await stopped, 0, service.stderrText());
  assert.ok(Date.now() - started < 10_000, 'the process did not wait for the 60 s shutdown deadline');

  const db = new Database(databasePath, { readonly: true });
  const run = db.prepare('SELECT status, error FROM agent_runs').get() as { status: string; error: string };
  db.close();
  assert.equal(run.status, 'failed');
  assert.match(run.error, /shutting down/);
});
