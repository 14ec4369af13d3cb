// Runs that outlive their request: a background run answers 202 at once and goes on; beyond the
// user's concurrency it waits `queued`, first in first out; any run can be cancelled; and every
// run's events are kept, numbered, replayed by GET /runs/{id}/events and followed live, resuming
// exactly after the event a client names.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertConflict, assertInvalid, assertNotFound, startService, waitFor, type Json } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { testConfig } from './helpers.js';

const fake = await startFakeOpenAI();
after(() => fake.close());
const base = testConfig();
const service = await startService({ runs: { ...base.runs, concurrencyPerUser: 1, queuePerUser: 2 } });
const user = await service.signUp();
const other = await service.signUp();
const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url };
const agent = (await service.request('POST', '/api/v1/agents', { token: user.token, body: { name: 'worker', type: 'VENDOR_A', llm } })).body
  .data;

interface LogEvent {
  id: number;
  event: string;
  data: Json;
}

/** Reads an SSE body to its end: every event with its id, name and parsed data. */
function parseEvents(text: string): LogEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.startsWith('data:')))
    .map((block) => {
      const lines = block.split('\n');
      const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      return { id: Number(field('id')), event: field('event') ?? '', data: JSON.parse(field('data') ?? 'null') };
    });
}

/** A run's log read to its end, from `url` (this file's service unless given) as `token` (the user's unless given). */
async function readLog(runId: string, options: { after?: number; lastEventId?: string; token?: string; url?: string } = {}) {
  const query = options.after === undefined ? '' : `?after=${options.after}`;
  const headers: Record<string, string> = { Authorization: `Bearer ${options.token ?? user.token}` };
  if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
  const response = await fetch(`${options.url ?? service.url}/api/v1/runs/${runId}/events${query}`, { headers });
  return { status: response.status, events: parseEvents(await response.text()) };
}

/** The texts of a log's `token` events, joined. */
const tokenText = (events: LogEvent[]) =>
  events
    .filter((event) => event.event === 'token')
    .map((event) => event.data.text)
    .join('');

const getRun = async (runId: string) => (await service.request('GET', `/api/v1/runs/${runId}`, { token: user.token })).body.data;
const ended = (runId: string) =>
  waitFor(`run ${runId} ends`, async () => {
    const run = await getRun(runId);
    return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : undefined;
  });
const invoke = (body: Json, token = user.token) => service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body });

describe('a background run', () => {
  test('answers 202 at once, goes on, and its log replays to exactly its output', async () => {
    fake.reply({ text: 'The quick brown fox jumps.', chunks: ['The ', 'quick ', 'brown ', 'fox ', 'jumps.'], chunkDelayMs: 20 });
    const accepted = await invoke({ input: 'tell me', background: true, stream: false });
    assert.equal(accepted.status, 202);
    assert.deepEqual(Object.keys(accepted.body.data).sort(), ['runId', 'sessionId', 'status']);
    assert.equal(accepted.body.data.status, 'running');
    const run = await ended(accepted.body.data.runId);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.background, true);
    assert.deepEqual(run.actions, []);

    const log = await readLog(run.id);
    assert.equal(log.status, 200);
    assert.deepEqual(
      log.events.map((event) => event.id),
      log.events.map((_, index) => index + 1),
      'numbered 1, 2, 3 … with nothing skipped',
    );
    assert.equal(log.events[0].event, 'run');
    assert.deepEqual(log.events[0].data, { runId: run.id, sessionId: null });
    const last = log.events[log.events.length - 1];
    assert.equal(last.event, 'done');
    assert.equal(last.data.output, run.output);
    const tokens = log.events.filter((event) => event.event === 'token');
    assert.ok(tokens.length >= 1);
    assert.equal(tokenText(tokens), run.output);
    assert.deepEqual(
      log.events.slice(1, -1).map((event) => event.event),
      tokens.map(() => 'token'),
      'between run and done: only tokens',
    );

    // Resuming after each event gives exactly the rest, by ?after= and by Last-Event-ID alike.
    for (const cut of log.events.map((event) => event.id).concat(0)) {
      const rest = log.events.filter((event) => event.id > cut);
      assert.deepEqual((await readLog(run.id, { after: cut })).events, rest, `after ${cut}`);
      assert.deepEqual((await readLog(run.id, { lastEventId: String(cut) })).events, rest, `Last-Event-ID ${cut}`);
    }
  });

  test('streamed, answers the run log with ids, and goes on when its client goes away', async () => {
    fake.reply({ text: 'one two three four', chunks: ['one ', 'two ', 'three ', 'four'], chunkDelayMs: 150 });
    const controller = new AbortController();
    const response = await fetch(`${service.url}/api/v1/agents/${agent.id}/invoke`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'count', background: true, stream: true }),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('event: token')) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /^id: 1\nevent: run\n/m);
    const runId = JSON.parse(/event: run\ndata: (.*)\n/.exec(text)![1]).runId;
    controller.abort();
    const run = await ended(runId);
    assert.equal(run.status, 'succeeded', 'the disconnect did not cancel it');
    assert.equal(run.output, 'one two three four');
    const log = await readLog(runId);
    assert.equal(tokenText(log.events), run.output);
  });

  test('is followed live: a client joining mid-run gets the rest as it comes, then the end', async () => {
    const words = Array.from({ length: 12 }, (_, index) => `w${index} `);
    fake.reply({ text: words.join(''), chunks: words, chunkDelayMs: 100 });
    const { runId } = (await invoke({ input: 'slowly', background: true })).body.data;
    await waitFor('some tokens written', async () => ((await readLog(runId)).events.length >= 3 ? true : undefined));
    const live = await readLog(runId); // follows until the run ends
    const run = await getRun(runId);
    assert.equal(run.status, 'succeeded');
    assert.equal(live.events[live.events.length - 1].event, 'done');
    assert.equal(tokenText(live.events), run.output);
    assert.deepEqual(live.events, (await readLog(runId)).events, 'the live stream and a later replay are the same events');
  });

  test('followed from past its last event (after= beyond the end), the stream still ends with the run, empty', async () => {
    const words = ['one ', 'two ', 'three'];
    fake.reply({ text: words.join(''), chunks: words, chunkDelayMs: 150 });
    const { runId } = (await invoke({ input: 'slowly', background: true })).body.data;
    const beyond = readLog(runId, { after: 999_999 });
    const byHeader = readLog(runId, { lastEventId: '999999' });
    const run = await ended(runId);
    assert.equal(run.status, 'succeeded');
    const answered = await Promise.race([Promise.all([beyond, byHeader]), new Promise((done) => setTimeout(done, 3000, 'still open'))]);
    assert.notEqual(answered, 'still open', 'both streams ended with the run');
    assert.deepEqual(answered, [
      { status: 200, events: [] },
      { status: 200, events: [] },
    ]);
  });
});

describe('every run is logged', () => {
  test('a plain foreground invoke has a log ending with done', async () => {
    fake.reply({ text: 'plain answer' });
    const reply = await invoke({ input: 'plain' });
    assert.equal(reply.status, 200);
    const log = await readLog(reply.body.data.runId);
    assert.deepEqual(
      log.events.map((event) => event.event),
      ['run', 'token', 'done'].filter((name) => name !== 'token' || log.events.some((event) => event.event === 'token')),
    );
    assert.equal(log.events.at(-1)!.data.output, 'plain answer');
  });

  test('the answer, the run record and the log tell one end: the same ms, output and usage', async () => {
    // The answer was once timed after the end's fsync and the record before it: a client reading the
    // log as the run ended saw one ms, a later reader another.
    for (let k = 0; k < 12; k += 1) {
      fake.reply({ text: `answer ${k}` });
      const reply = await invoke({ input: `q ${k}` });
      assert.equal(reply.status, 200);
      const run = await getRun(reply.body.data.runId);
      const done = (await readLog(run.id)).events.at(-1)!;
      assert.equal(done.event, 'done');
      for (const told of [reply.body.data, done.data]) {
        assert.equal(told.ms, run.ms, `run ${k}: ms`);
        assert.equal(told.output, run.output);
        assert.deepEqual(told.usage, run.usage);
      }
    }
  });

  test('a failed run ends its log with error and its code', async () => {
    fake.reply({ status: 500, message: 'model exploded' });
    const reply = await invoke({ input: 'fail please', background: true });
    const run = await ended(reply.body.data.runId);
    assert.equal(run.status, 'failed');
    const log = await readLog(run.id);
    const last = log.events.at(-1)!;
    assert.equal(last.event, 'error');
    assert.equal(last.data.code, 'upstream_error');
    assert.equal(last.data.message, run.error);
  });
});

describe('the queue and cancel', () => {
  test('beyond the concurrency a background run waits queued, first in first out; beyond the queue 429', async () => {
    fake.reply({ hang: true });
    const first = (await invoke({ input: 'first: hangs', background: true })).body.data;
    assert.equal(first.status, 'running');
    await waitFor(
      'the first run reached the model',
      () => fake.requests.some((r) => JSON.stringify(r.body).includes('first: hangs')) || undefined,
    );
    const second = (await invoke({ input: 'second', background: true })).body.data;
    const third = (await invoke({ input: 'third', background: true })).body.data;
    assert.equal(second.status, 'queued');
    assert.equal(third.status, 'queued');
    assert.equal((await getRun(second.runId)).status, 'queued');
    const full = await invoke({ input: 'fourth', background: true });
    assert.equal(full.status, 429);
    assert.equal(full.body.error.code, 'rate_limited');
    // A foreground run is refused as before.
    assert.equal((await invoke({ input: 'foreground' })).status, 429);

    // The third leaves the queue when cancelled: its log is its run event, then the cancel.
    const cancelledThird = await service.request('POST', `/api/v1/runs/${third.runId}/cancel`, { token: user.token });
    assert.equal(cancelledThird.status, 200);
    assert.equal(cancelledThird.body.data.status, 'cancelled');
    assert.deepEqual(
      (await readLog(third.runId)).events.map((event) => [event.id, event.event, event.data.code]),
      [
        [1, 'run', undefined],
        [2, 'error', 'cancelled'],
      ],
    );

    // Cancelling the first frees its slot: the second runs.
    fake.reply({ text: 'second done' });
    const cancelledFirst = await service.request('POST', `/api/v1/runs/${first.runId}/cancel`, { token: user.token });
    assert.equal(cancelledFirst.body.data.status, 'cancelled');
    assert.match(cancelledFirst.body.data.error, /cancelled/);
    const firstLog = await readLog(first.runId);
    assert.deepEqual(firstLog.events.at(-1)!.data.code, 'cancelled');
    const secondRun = await ended(second.runId);
    assert.equal(secondRun.status, 'succeeded');
    assert.equal(secondRun.output, 'second done');
    assert.equal((await getRun(third.runId)).status, 'cancelled', 'a cancelled queued run never runs');
    assert.ok(!fake.requests.some((r) => JSON.stringify(r.body).includes('"third"')));

    // Nothing left to cancel.
    assertConflict(await service.request('POST', `/api/v1/runs/${first.runId}/cancel`, { token: user.token }));
    assertConflict(await service.request('POST', `/api/v1/runs/${second.runId}/cancel`, { token: user.token }));
  });

  test('a plain foreground run cancelled while its client waits: the client is told (409), the run is cancelled', async () => {
    fake.reply({ hang: true });
    const waiting = invoke({ input: 'foreground hangs' });
    const runId = await waitFor('the run is recorded', async () => {
      const list = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: user.token });
      return list.body.data.find((run: Json) => run.input === 'foreground hangs' && run.status === 'running')?.id;
    });
    const cancel = await service.request('POST', `/api/v1/runs/${runId}/cancel`, { token: user.token });
    assert.equal(cancel.status, 200);
    const reply = await waiting;
    assert.equal(reply.status, 409);
    assert.match(reply.body.error.message, /cancelled/);
    assert.equal((await getRun(runId)).status, 'cancelled');
  });
});

describe('cancel at the edges', () => {
  test('a queued run cancelled as it is given its slot (its endpoint still being checked) ends its log', async () => {
    let slowLookups = false;
    const local = await startService({ runs: { ...base.runs, concurrencyPerUser: 1, queuePerUser: 2 } }, undefined, {
      resolveHost: async () => {
        if (slowLookups) await new Promise((resolve) => setTimeout(resolve, 600));
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const owner = await local.signUp();
    const create = async (name: string, baseUrl: string) =>
      (await local.request('POST', '/api/v1/agents', { token: owner.token, body: { name, type: 'VENDOR_A', llm: { ...llm, baseUrl } } }))
        .body.data;
    const quick = await create('quick', fake.url);
    // A host name: the run's endpoint is looked up when it is given its slot.
    const named = await create('named', fake.url.replace('127.0.0.1', 'model.example'));
    const start = (agentId: string) =>
      local.request('POST', `/api/v1/agents/${agentId}/invoke`, { token: owner.token, body: { input: 'go', background: true } });
    const getLocal = async (runId: string) => (await local.request('GET', `/api/v1/runs/${runId}`, { token: owner.token })).body.data;
    fake.reply({ text: 'first', chunks: ['first'], chunkDelayMs: 200 });
    const first = (await start(quick.id)).body.data;
    slowLookups = true;
    const second = (await start(named.id)).body.data;
    assert.equal(second.status, 'queued');
    await waitFor('the first run ends', async () => ((await getLocal(first.runId)).status === 'succeeded' ? true : undefined));
    // The second has its slot now, its endpoint's lookup under way.
    const cancelled = await local.request('POST', `/api/v1/runs/${second.runId}/cancel`, { token: owner.token });
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.data.status, 'cancelled');
    const response = await fetch(`${local.url}/api/v1/runs/${second.runId}/events`, {
      headers: { Authorization: `Bearer ${owner.token}` },
      signal: AbortSignal.timeout(3000),
    });
    const events = parseEvents(await response.text());
    assert.deepEqual(
      events.map((event) => [event.id, event.event, event.data.code]),
      [
        [1, 'run', undefined],
        [2, 'error', 'cancelled'],
      ],
      'its log is its run event, then the cancel',
    );
    slowLookups = false;
    // Its slot is free again once the lookup under way has come back.
    fake.reply({ text: 'next' });
    const next = await waitFor('a run gets the slot', async () => {
      const answer = await local.request('POST', `/api/v1/agents/${quick.id}/invoke`, { token: owner.token, body: { input: 'go' } });
      return answer.status === 429 ? undefined : answer;
    });
    assert.equal(next.status, 200, next.text);
    assert.equal((await getLocal(second.runId)).status, 'cancelled');
  });
});

describe('a write of the log that fails', () => {
  test('loses nothing: its events are written with the next, and the replay is whole', async () => {
    const pieces = ['one ', 'two ', 'three ', 'four ', 'five ', 'six'];
    fake.reply({ text: pieces.join(''), chunks: pieces, chunkDelayMs: 150 });
    // Every write of run events fails while the trigger is there (a full disk, a locked file).
    service.db.exec("CREATE TEMP TRIGGER fail_run_events BEFORE INSERT ON run_events BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    let started;
    try {
      started = (await invoke({ input: 'while writes fail', background: true })).body.data;
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      service.db.exec('DROP TRIGGER fail_run_events');
    }
    const run = await ended(started.runId);
    assert.equal(run.status, 'succeeded');
    const replay = (await readLog(started.runId)).events;
    assert.deepEqual(
      replay.map((event) => event.id),
      replay.map((_, k) => k + 1),
      'numbered 1, 2, 3 … with no hole',
    );
    assert.equal(replay[0].event, 'run');
    assert.equal(tokenText(replay), run.output);
  });
});

describe('a run whose agent is deleted while it streams', () => {
  test("writes nothing more: not into the run that gets its seq next (another user's), nor stops the others' writes", async () => {
    const doomed = (await service.request('POST', '/api/v1/agents', { token: user.token, body: { name: 'doomed', type: 'VENDOR_A', llm } }))
      .body.data;
    const secret = ['secret ', 'of ', 'the ', 'first ', 'user ', 'kept ', 'going ', 'on'];
    fake.reply({ text: secret.join(''), chunks: secret, chunkDelayMs: 150 });
    const first = (
      await service.request('POST', `/api/v1/agents/${doomed.id}/invoke`, {
        token: user.token,
        body: { input: 'go on', background: true },
      })
    ).body.data;
    const seqOf = (runId: string) => service.db.prepare('SELECT seq FROM agent_runs WHERE id = ?').pluck().get(runId);
    const firstSeq = seqOf(first.runId);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal((await service.request('DELETE', `/api/v1/agents/${doomed.id}`, { token: user.token })).status, 200);
    assert.equal(seqOf(first.runId), undefined, 'the run went with its agent');

    // Another user's run, started while the deleted one still streams, is given the deleted run's seq.
    const theirs = (
      await service.request('POST', '/api/v1/agents', { token: other.token, body: { name: 'theirs', type: 'VENDOR_A', llm } })
    ).body.data;
    fake.reply({ text: 'mine alone', chunks: ['mine ', 'alone'], chunkDelayMs: 300 });
    const second = (
      await service.request('POST', `/api/v1/agents/${theirs.id}/invoke`, {
        token: other.token,
        body: { input: 'mine', background: true },
      })
    ).body.data;
    assert.equal(seqOf(second.runId), firstSeq, 'the seq of the deleted run is taken again');

    // Within a few writes of the log, the new run's events are on disk: the deleted run's do not stop them.
    const stored = () => service.db.prepare('SELECT name, data FROM run_events WHERE run_seq = ? ORDER BY seq').all(firstSeq) as Json[];
    await waitFor('the new run has events written', async () => (stored().some((row) => row.name === 'token') ? true : undefined));

    const run = (await waitFor(`run ${second.runId} ends`, async () => {
      const read = (await service.request('GET', `/api/v1/runs/${second.runId}`, { token: other.token })).body.data;
      return read.status === 'succeeded' ? read : undefined;
    })) as Json;
    // The deleted run ends too, and leaves the log's memory.
    await waitFor('the deleted run leaves the log', async () => (service.app.eventLog.isLive(first.runId) ? undefined : true));
    const replay = (await readLog(second.runId, { token: other.token })).events;
    assert.equal(tokenText(replay), run.output);
    assert.equal(run.output, 'mine alone');
    assert.deepEqual(
      replay.map((event) => event.id),
      replay.map((_, k) => k + 1),
    );
    for (const row of stored()) assert.doesNotMatch(String(row.data), /secret|first|going/, `${row.name} ${row.data}`);
  });
});

describe('a queued run ended by a shutdown', () => {
  test('its follower gets the end numbered as a replay numbers it, so a resumed follower never gets it twice', async () => {
    const local = await startService({ runs: { ...base.runs, concurrencyPerUser: 1, queuePerUser: 2 } });
    const owner = await local.signUp();
    const worker = (await local.request('POST', '/api/v1/agents', { token: owner.token, body: { name: 'w', type: 'VENDOR_A', llm } })).body
      .data;
    const start = (input: string) =>
      local.request('POST', `/api/v1/agents/${worker.id}/invoke`, { token: owner.token, body: { input, background: true } });
    fake.reply({ hang: true });
    await start('holds the slot');
    const queued = (await start('waits')).body.data;
    assert.equal(queued.status, 'queued');
    const following = await fetch(`${local.url}/api/v1/runs/${queued.runId}/events`, {
      headers: { Authorization: `Bearer ${owner.token}` },
      signal: AbortSignal.timeout(5000),
    });
    await local.app.stopBackgroundWork();
    const live = parseEvents(await following.text());
    assert.deepEqual(
      live.map((event) => [event.event, event.data.code]),
      [
        ['run', undefined],
        ['error', 'interrupted'],
      ],
    );
    const asOwner = { url: local.url, token: owner.token };
    const replay = (await readLog(queued.runId, asOwner)).events;
    assert.deepEqual(
      replay.map((event) => event.id),
      live.map((event) => event.id),
      'the replay numbers every event as the follower got it',
    );
    const resumed = await readLog(queued.runId, { ...asOwner, lastEventId: String(live.at(-1)!.id) });
    assert.deepEqual(resumed.events, [], 'resumed after the end it saw, the follower gets nothing more');
  });
});

describe('cancel racing the end', () => {
  test('a cancel answers 200 only for a run it cancelled, else 409 with the end the run had', async () => {
    let answeredOk = 0;
    for (let attempt = 0; attempt < 40; attempt += 1) {
      fake.reply({ text: 'ab', chunks: ['a', 'b'], chunkDelayMs: 15 });
      const { runId } = (await invoke({ input: 'race', background: true })).body.data;
      await new Promise((resolve) => setTimeout(resolve, 20 + (attempt % 8) * 4));
      const cancel = await service.request('POST', `/api/v1/runs/${runId}/cancel`, { token: user.token });
      const run = await ended(runId);
      if (cancel.status === 200) {
        answeredOk += 1;
        assert.equal(cancel.body.data.status, 'cancelled', `attempt ${attempt}: a 200 names the cancel`);
        assert.equal(run.status, 'cancelled', `attempt ${attempt}: the run that was answered as cancelled is`);
      } else {
        assertConflict(cancel);
        assert.equal(run.status, 'succeeded', `attempt ${attempt}`);
      }
    }
    assert.ok(answeredOk > 0, 'some cancels came in time');
  });
});

describe('bad input gets a clear error', () => {
  test('after, Last-Event-ID, other users and unknown runs', async () => {
    fake.reply({ text: 'mine' });
    const mine = (await invoke({ input: 'mine' })).body.data.runId;
    for (const after of ['abc', '-1', '1.5', '99999999999999999999']) {
      const reply = await service.request('GET', `/api/v1/runs/${mine}/events?after=${encodeURIComponent(after)}`, { token: user.token });
      assertInvalid(reply, 'after');
    }
    for (const header of ['garbage', '-3', '7e3']) {
      const reply = await service.request('GET', `/api/v1/runs/${mine}/events`, {
        token: user.token,
        headers: { 'Last-Event-ID': header },
      });
      assertInvalid(reply, 'Last-Event-ID');
    }
    assertNotFound(await service.request('GET', `/api/v1/runs/${mine}/events`, { token: other.token }));
    assertNotFound(await service.request('POST', `/api/v1/runs/${mine}/cancel`, { token: other.token }));
    assertNotFound(await service.request('GET', '/api/v1/runs/00000000-0000-0000-0000-000000000000/events', { token: user.token }));
    assertInvalid(await invoke({ input: 'x', background: 'yes' }), 'background');
    // Past the end: nothing more, the stream ends at once.
    const log = await readLog(mine);
    assert.deepEqual((await readLog(mine, { after: log.events.at(-1)!.id })).events, []);
    assert.equal((await getRun(mine)).status, 'succeeded', 'nothing changed');
  });
});
