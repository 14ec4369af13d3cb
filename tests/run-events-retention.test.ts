// Run event logs are kept RUN_EVENTS_RETENTION days after their run ended: the sweep deletes the
// events of runs that ended before that, keeps those of runs that ended since and of runs not
// ended (however long ago they started), and keeps every run record. A swept run's log still ends:
// GET /runs/{id}/events answers its end event, made from the record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, waitFor, type Json } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { createRunEventStore } from '../src/runs/event-store.js';
import { createEventSweeper } from '../src/runs/event-sweeper.js';
import { formatTimestamp } from '../src/lib/ids.js';
import { silentLogger } from '../src/lib/log.js';

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 30;

const fake = await startFakeOpenAI();
const service = await startService();
const user = await service.signUp();
const auth = { Autorization: `Bearer ${user.token}` };
const agent = await service.create(user.token, '/agents', {
  name: 'Keeper',
  type: 'VENDOR_A',
  llm: { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-retention-0123456789' },
});

interface SseEvent {
  id: number;
  event: string;
  data: Json;
}

function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.includes('event: '))
    .map((block) => ({
      id: Number(/^id: (\d+)$/m.exec(block)?.[1]),
      event: /^event: (.*)$/m.exec(block)![1],
      data: JSON.parse(
        block
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n'),
      ),
    }));
}

/** The whole log of a run that has ended. */
async function eventsOf(runId: string): Promise<SseEvent[]> {
  const response = await fetch(`${service.url}/api/v1/runs/${runId}/events`, { headers: auth });
  assert.equal(response.status, 200);
  return parseEvents(await response.text());
}

/** A streamed run answering `text` in pieces; its run id once it has ended. */
async function finishedRun(text: string): Promise<string> {
  const pieces = text.split(/(?<= )/);
  fake.reply({ text, chunks: pieces });
  const response = await fetch(`${service.url}/api/v1/agents/${agent.id}/invoke`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'Say it.', stream: true }),
  });
  const events = parseEvents(await response.text());
  assert.equal(events.at(-1)?.event, 'done');
  return events[0].data.runId;
}

const seqOf = (runId: string) => service.db.prepare('SELECT seq FROM agent_runs WHERE id = ?').pluck().get(runId) as number;
const storedEvents = (runId: string) =>
  service.db.prepare('SELECT count(*) FROM run_events WHERE run_seq = ?').pluck().get(seqOf(runId)) as number;
/** Moves a run's times back: started `startedDaysAgo` days ago, ended `endedDaysAgo` days ago (null: not ended). */
function age(runId: string, startedDaysAgo: number, endedDaysAgo: number | null): void {
  const now = Date.now();
  service.db
    .prepare('UPDATE agent_runs SET started_at = ?, finished_at = coalesce(?, finished_at) WHERE id = ?')
    .run(
      formatTimestamp(now - startedDaysAgo * DAY_MS),
      endedDaysAgo === null ? null : formatTimestamp(now - endedDaysAgo * DAY_MS),
      runId,
    );
}

test('the sweep removes the events of runs ended before the retention, keeps the rest and every run; a swept log still ends', async () => {
  // Oldest first (the sweep walks the runs in the order they started).
  const oldA = await finishedRun('Forty days ago. ');
  const oldB = await finishedRun('Thirty-five days ago, in three pieces. ');
  // Started long ago, still going: a stream the model holds open.
  fake.reply({ hangAfter: ['Still ', 'thinking '] });
  const accepted = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
    token: user.token,
    body: { input: 'Take your time.', background: true },
  });
  assert.equal(accepted.status, 202);
  const unfinished = accepted.body.data.runId as string;
  await waitFor('the running run to have its tokens written', () => (storedEvents(unfinished) >= 2 ? true : undefined));
  const endedLately = await finishedRun('Started long ago, ended yesterday. ');
  const recent = await finishedRun('Today, just now. ');

  age(oldA, 41, 40);
  age(oldB, 36, 35);
  age(unfinished, 50, null);
  age(endedLately, 45, 1);

  const before = new Map<string, SseEvent[]>();
  for (const runId of [oldA, oldB, endedLately, recent]) {
    before.set(runId, await eventsOf(runId));
    assert.ok(storedEvents(runId) >= 2, 'the log has its events before the sweep');
  }
  const records = new Map<string, Json>();
  for (const runId of [oldA, oldB, endedLately, recent])
    records.set(runId, (await service.request('GET', `/api/v1/runs/${runId}`, { token: user.token })).body.data);
  const unfinishedEvents = storedEvents(unfinished);

  const sweeper = createEventSweeper(createRunEventStore(service.db), RETENTION_DAYS, silentLogger);
  await sweeper.sweepNow();

  for (const runId of [oldA, oldB]) {
    assert.equal(storedEvents(runId), 0, `the events of ${runId}, ended before the retention, are swept`);
    const run = await service.request('GET', `/api/v1/runs/${runId}`, { token: user.token });
    assert.equal(run.status, 200, 'the run record is kept');
    assert.deepEqual(run.body.data, records.get(runId));
    const events = await eventsOf(runId);
    assert.deepEqual(
      events.map((e) => e.event),
      ['done'],
      'a swept log is its end event alone',
    );
    assert.equal(events[0].id, 1);
    assert.deepEqual(events[0].data, before.get(runId)!.at(-1)!.data, 'the same end as before the sweep');
  }
  for (const runId of [endedLately, recent]) {
    assert.deepEqual(await eventsOf(runId), before.get(runId), `the log of ${runId}, ended within the retention, is kept whole`);
  }
  assert.equal(storedEvents(unfinished), unfinishedEvents, 'the log of a run not ended is kept, however old');

  // The unfinished run, cancelled now: its log still has what it streamed, then its end.
  assert.equal((await service.request('POST', `/api/v1/runs/${unfinished}/cancel`, { token: user.token })).status, 200);
  const events = await eventsOf(unfinished);
  assert.equal(events[0].event, 'run');
  assert.equal(
    events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.text)
      .join(''),
    'Still thinking ',
  );
  assert.deepEqual([events.at(-1)!.event, events.at(-1)!.data.code], ['error', 'cancelled']);
});

test('a run waiting for approval keeps its log however long ago it began to wait: it goes on in the same log', async () => {
  const tool = await service.create(user.token, '/tools', {
    name: 'launcher',
    type: 'HOSTED_MODEL',
    description: 'Launches a rocket.',
    metadata: { url: 'http://127.0.0.1:9/launch' },
  });
  await service.create(user.token, '/agent-tools', { agentId: agent.id, toolId: tool.id, requiresApproval: true });
  fake.reply({ toolCalls: [{ id: 'call-1', name: tool.name, arguments: '{"input":"moon"}' }] });
  const paused = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'Launch it.' } });
  assert.equal(paused.status, 202);
  const waiting = paused.body.data.runId as string;
  assert.equal(paused.body.data.status, 'requires_action');
  const logged = storedEvents(waiting);
  assert.ok(logged >= 2);
  // It began to wait 40 days ago (its finished_at says when), under an approval TTL longer than the
  // retention; every run before it started earlier still (the sweep walks runs in the order they started).
  service.db.prepare('UPDATE agent_runs SET started_at = ? WHERE id != ?').run(formatTimestamp(Date.now() - 50 * DAY_MS), waiting);
  age(waiting, 41, 40);
  await createEventSweeper(createRunEventStore(service.db), RETENTION_DAYS, silentLogger).sweepNow();
  assert.equal(storedEvents(waiting), logged, 'the log of a waiting run is kept');
});
