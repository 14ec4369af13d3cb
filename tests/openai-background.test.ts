// Background responses through the official `openai` package: a response created with
// `background: true` is a durable run — answered at once (`queued` or `in_progress`), read back until
// it completes, its semantic events streamed as it goes and again from its run's event log (resumed
// after any `sequence_number`, the numbers the same on every read), cancelled; a run waiting for
// tool approval shows as `incomplete`; another user's response is not found.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startService, testConfig, waitFor, type Json, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const fake = await startFakeOpenAI();
after(() => fake.close());
// One run at a time per user, so a second background response waits `queued`.
const service: TestService = await startService({ runs: { ...testConfig().runs, concurrencyPerUser: 1, queuePerUser: 5 } });
const alice = await service.signUp('Alice');
const bob = await service.signUp('Bob');
const tokenOf = async (user: { token: string }) =>
  (await service.create(user.token, '/api-tokens', { description: 'openai client' })).token as string;
const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-fake-0123456789' };
const agent = await service.create(alice.token, '/agents', { name: 'Worker', type: 'VENDOR_A', llm });

const client = (apiKey: string) => new OpenAI({ baseURL: `${service.url}/v1`, apiKey, maxRetries: 0 });
const openai = client(await tokenOf(alice));
const bobs = client(await tokenOf(bob));

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The response read back until it is no longer queued or in progress. */
const settled = (id: string) =>
  waitFor(`response ${id} settles`, async () => {
    const response = await openai.responses.retrieve(id);
    return response.status === 'queued' || response.status === 'in_progress' ? undefined : response;
  });

const runOf = async (responseId: string): Promise<Json> =>
  (await service.request('GET', `/api/v1/runs/${responseId.slice('resp_'.length)}`, { token: alice.token })).body.data;

/** Asserts that `promise` rejects with the SDK's `type` of error and this status; returns it. */
async function rejectsWith(
  promise: Promise<unknown>,
  type: abstract new (...args: any[]) => InstanceType<typeof OpenAI.APIError>,
  status: number,
): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    assert.equal(error.status, status);
    return error;
  }
  assert.fail(`expected ${type.name}`);
}

const TYPES_OF_A_COMPLETED_STREAM = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.completed',
];
/** The types of a stream's events, a run of deltas counted as one. */
const typesOf = (events: StreamEvent[]) =>
  events.map((event) => event.type).filter((type, index, types) => type !== 'response.output_text.delta' || types[index - 1] !== type);

describe('a background response', () => {
  test('is answered in_progress at once, goes on, and reads back completed with its output_text and usage', async () => {
    fake.reply({
      text: 'Slow and steady.',
      chunks: ['Slow ', 'and ', 'steady.'],
      chunkDelayMs: 100,
      usage: { prompt_tokens: 9, completion_tokens: 3 },
    });
    const created = await openai.responses.create({ model: agent.id, input: 'Take your time', background: true, metadata: {} });
    assert.equal(created.status, 'in_progress');
    assert.equal(created.output_text, '');
    assert.deepEqual(created.output, []);
    assert.equal(created.usage, null);
    assert.match(created.id, /^resp_/);

    const done = await settled(created.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.output_text, 'Slow and steady.');
    assert.deepEqual(done.usage, { input_tokens: 9, output_tokens: 3, total_tokens: 12 });
    assert.equal(done.created_at, created.created_at);
    const run = await runOf(created.id);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.background, true);
    assert.equal(run.output, 'Slow and steady.');
  });

  test('beyond the concurrency it is queued, then runs in turn', async () => {
    fake.reply({ text: 'First.', delayMs: 300 }, { text: 'Second.' });
    const first = await openai.responses.create({ model: agent.id, input: 'one', background: true });
    const second = await openai.responses.create({ model: agent.id, input: 'two', background: true });
    assert.equal(first.status, 'in_progress');
    assert.equal(second.status, 'queued');
    assert.equal((await settled(first.id)).output_text, 'First.');
    assert.equal((await settled(second.id)).output_text, 'Second.');
  });

  test('with store: false is a BadRequestError naming store; nothing runs', async () => {
    const before = fake.requests.length;
    const error = await rejectsWith(
      openai.responses.create({ model: agent.id, input: 'x', background: true, store: false }),
      OpenAI.BadRequestError,
      400,
    );
    assert.equal(error.param, 'store');
    assert.equal(fake.requests.length, before);
  });
});

describe('a background response streamed', () => {
  test('sends its events as it goes; read again after every sequence_number it sends exactly the rest, the same', async () => {
    const text = 'One two three four five.';
    fake.reply({ text, chunks: ['One ', 'two ', 'three ', 'four ', 'five.'], chunkDelayMs: 60 });
    const live = await openai.responses.create({ model: agent.id, input: 'Count', background: true, stream: true });
    const events: StreamEvent[] = [];
    let followed: Promise<StreamEvent[]> | undefined;
    for await (const event of live) {
      events.push(event);
      // A second client joins while the run goes on, after the first piece of text.
      if (event.type === 'response.output_text.delta' && followed === undefined) {
        followed = collect(
          await openai.responses.retrieve(event.item_id.replace(/^msg_/, 'resp_'), { stream: true, starting_after: event.sequence_number }),
        );
      }
    }
    assert.deepEqual(typesOf(events), TYPES_OF_A_COMPLETED_STREAM);
    assert.deepEqual(
      events.map((event) => event.sequence_number),
      events.map((_event, index) => index),
    );
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    assert.equal(deltas.map((event) => event.delta).join(''), text);
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    assert.equal(completed.response.output_text, text);
    assert.equal(completed.response.status, 'completed');
    const id = completed.response.id;
    assert.equal((await runOf(id)).output, text);

    assert.ok(followed, 'the stream had a delta');
    const firstDelta = events.findIndex((event) => event.type === 'response.output_text.delta');
    assert.deepEqual(await followed, events.slice(firstDelta + 1), 'followed live from after the first delta');

    assert.deepEqual(await collect(await openai.responses.retrieve(id, { stream: true })), events, 'replayed from the start');
    for (const event of events) {
      const rest = await collect(await openai.responses.retrieve(id, { stream: true, starting_after: event.sequence_number }));
      assert.deepEqual(rest, events.slice(event.sequence_number + 1), `after ${event.sequence_number}`);
    }
  });

  test('a stream cut by its client does not stop the run; resuming gets the rest', async () => {
    fake.reply({ text: 'Still here.', chunks: ['Still ', 'here.'], chunkDelayMs: 150 });
    const controller = new AbortController();
    const live = await openai.responses.create(
      { model: agent.id, input: 'Go', background: true, stream: true },
      { signal: controller.signal },
    );
    let created: OpenAI.Responses.ResponseCreatedEvent | undefined;
    try {
      for await (const event of live) {
        if (event.type === 'response.created') {
          created = event;
          controller.abort();
        }
      }
    } catch (error) {
      assert.equal((error as Error).name, 'APIUserAbortError');
    }
    assert.ok(created);
    const rest = await collect(
      await openai.responses.retrieve(created.response.id, { stream: true, starting_after: created.sequence_number }),
    );
    assert.equal(rest[0].sequence_number, created.sequence_number + 1);
    assert.equal((rest.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response.output_text, 'Still here.');
  });

  test('a response not made in the background cannot be streamed again; a bad starting_after is a 400', async () => {
    fake.reply({ text: 'Quick.' });
    const plain = await openai.responses.create({ model: agent.id, input: 'Now' });
    const error = await rejectsWith(openai.responses.retrieve(plain.id, { stream: true }), OpenAI.BadRequestError, 400);
    assert.equal(error.param, 'stream');
    const reply = await fetch(`${service.url}/v1/responses/${plain.id}?stream=true&starting_after=-1`, {
      headers: { Authorization: `Bearer ${openai.apiKey}` },
    });
    assert.equal(reply.status, 400);
    assert.equal(((await reply.json()) as Json).error.param, 'starting_after');
  });
});

describe('cancelling a background response', () => {
  test('a running one and a queued one become cancelled; one that has finished, or was not in the background, is a 400', async () => {
    fake.reply({ hang: true });
    const running = await openai.responses.create({ model: agent.id, input: 'Forever', background: true });
    const queued = await openai.responses.create({ model: agent.id, input: 'Later', background: true });
    assert.equal(running.status, 'in_progress');
    assert.equal(queued.status, 'queued');

    const stream = collect(await openai.responses.retrieve(running.id, { stream: true }));
    const cancelledQueued = await openai.responses.cancel(queued.id);
    assert.equal(cancelledQueued.status, 'cancelled');
    const cancelled = await openai.responses.cancel(running.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.id, running.id);
    assert.equal((await openai.responses.retrieve(running.id)).status, 'cancelled');
    assert.equal((await runOf(running.id)).status, 'cancelled');
    assert.equal((await runOf(queued.id)).status, 'cancelled');
    const last = (await stream).at(-1) as OpenAI.Responses.ResponseFailedEvent;
    assert.equal(last.type, 'response.failed');
    assert.equal(last.response.status, 'cancelled');

    await rejectsWith(openai.responses.cancel(running.id), OpenAI.BadRequestError, 400);
    fake.reply({ text: 'Done.' });
    const finished = await openai.responses.create({ model: agent.id, input: 'Quick', background: true });
    assert.equal((await settled(finished.id)).status, 'completed');
    await rejectsWith(openai.responses.cancel(finished.id), OpenAI.BadRequestError, 400);
    fake.reply({ text: 'Foreground.' });
    const foreground = await openai.responses.create({ model: agent.id, input: 'Now' });
    await rejectsWith(openai.responses.cancel(foreground.id), OpenAI.BadRequestError, 400);
    assert.equal((await runOf(foreground.id)).status, 'succeeded');
  });
});

describe('a response waiting for tool approval', () => {
  test('is incomplete, its reason requires_action, its stream ending response.incomplete; it can be cancelled', async () => {
    fake.reply({ text: 'Partial.' });
    const response = await openai.responses.create({ model: agent.id, input: 'Needs approval', background: true });
    await settled(response.id);
    // The run as the database holds one waiting for approval: its log ends with `requires_action`.
    const runId = response.id.slice('resp_'.length);
    const actions = [{ id: 'call_1', tool: 'tool-id', function: 'refund', input: { amount: 5 } }];
    service.db.prepare(`UPDATE agent_runs SET status = 'requires_action', actions = ? WHERE id = ?`).run(JSON.stringify(actions), runId);
    const { seq } = service.db.prepare('SELECT seq FROM agent_runs WHERE id = ?').get(runId) as { seq: number };
    const last = service.db.prepare('SELECT max(seq) FROM run_events WHERE run_seq = ?').pluck().get(seq) as number;
    service.db
      .prepare('INSERT INTO run_events (run_seq, seq, name, data) VALUES (?, ?, ?, ?)')
      .run(seq, last + 1, 'requires_action', JSON.stringify({ runId, actions }));

    const waiting = await openai.responses.retrieve(response.id);
    assert.equal(waiting.status, 'incomplete');
    assert.deepEqual(waiting.incomplete_details, { reason: 'requires_action' });
    assert.equal(waiting.output_text, '');

    const events = await collect(await openai.responses.retrieve(response.id, { stream: true }));
    const end = events.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
    assert.equal(end.type, 'response.incomplete');
    assert.equal(end.sequence_number, events.length - 1);
    assert.equal(end.response.status, 'incomplete');
    assert.deepEqual(end.response.incomplete_details, { reason: 'requires_action' });

    const cancelled = await openai.responses.cancel(response.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.incomplete_details, null);
  });
});

describe("another user's background response", () => {
  test('is not found to read, stream, cancel or delete; it is left as it was', async () => {
    fake.reply({ text: 'Mine.' });
    const response = await openai.responses.create({ model: agent.id, input: 'Private', background: true });
    await settled(response.id);
    await rejectsWith(bobs.responses.retrieve(response.id), OpenAI.NotFoundError, 404);
    await rejectsWith(bobs.responses.retrieve(response.id, { stream: true, starting_after: 2 }), OpenAI.NotFoundError, 404);
    await rejectsWith(bobs.responses.cancel(response.id), OpenAI.NotFoundError, 404);
    await rejectsWith(bobs.responses.delete(response.id), OpenAI.NotFoundError, 404);
    await rejectsWith(bobs.responses.create({ model: agent.id, input: 'x', background: true }), OpenAI.NotFoundError, 404);
    const mine = await openai.responses.retrieve(response.id);
    assert.equal(mine.status, 'completed');
    assert.equal(mine.output_text, 'Mine.');
  });
});

describe('a tool that needs approval, and a cancel, through the OpenAI API', async () => {
  // The tool's server answers every call at once.
  const toolServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('launched'));
  });
  await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
  after(() => toolServer.close());
  const tool = await service.create(alice.token, '/tools', {
    name: 'launch',
    type: 'HOSTED_MODEL',
    description: 'Launches a rocket.',
    metadata: { url: `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/launch` },
  });
  const careful = await service.create(alice.token, '/agents', { name: 'Careful', type: 'VENDOR_A', llm });
  await service.create(alice.token, '/agent-tools', { agentId: careful.id, toolId: tool.id, requiresApproval: true });
  const approveAll = async (runId: string) => {
    const { actions } = (await service.request('GET', `/api/v1/runs/${runId}`, { token: alice.token })).body.data;
    const answer = { actions: actions.map((action: Json) => ({ id: action.id, approve: true })) };
    const reply = await service.request('POST', `/api/v1/runs/${runId}/actions`, { token: alice.token, body: answer });
    assert.equal(reply.status, 202, JSON.stringify(reply.body));
  };

  test('a background stream resumed after its response.incomplete goes on numbered from the next event, as a whole replay numbers it', async () => {
    fake.reply({ toolCalls: [{ name: 'launch', arguments: '{"input":"now"}' }] }, { text: 'Launched it.', chunks: ['Launched ', 'it.'] });
    const first = await collect(await openai.responses.create({ model: careful.id, input: 'Launch', background: true, stream: true }));
    const incomplete = first.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
    assert.equal(incomplete.type, 'response.incomplete');
    const id = incomplete.response.id;
    await approveAll(id.slice('resp_'.length));
    assert.equal((await settled(id)).output_text, 'Launched it.');

    const resumed = await collect(await openai.responses.retrieve(id, { stream: true, starting_after: incomplete.sequence_number }));
    const whole = await collect(await openai.responses.retrieve(id, { stream: true }));
    assert.equal(resumed[0].sequence_number, incomplete.sequence_number + 1);
    assert.deepEqual(
      resumed,
      whole.filter((event) => event.sequence_number > incomplete.sequence_number),
    );
    assert.deepEqual(
      whole.filter((event) => event.sequence_number < incomplete.sequence_number),
      first.slice(0, -1),
      'the events before the wait are the same on every read',
    );
    const text = resumed.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    assert.equal(text, 'Launched it.');
  });

  test('a chat completion that waits for approval is one run: a 409 the SDK does not retry', async () => {
    fake.reply({ toolCalls: [{ name: 'launch', arguments: '{"input":"later"}' }] });
    const before = fake.requests.length;
    // The SDK's default: a 409 or a 5xx is retried twice, unless the answer says not to.
    const retrying = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: await tokenOf(alice) });
    const error = await rejectsWith(
      retrying.chat.completions.create({ model: careful.id, messages: [{ role: 'user', content: 'Launch' }] }),
      OpenAI.ConflictError,
      409,
    );
    assert.equal(error.code, 'requires_action');
    assert.equal(error.headers?.get('x-should-retry'), 'false');
    assert.equal(fake.requests.length, before + 1, 'the model was asked once: one run');
    const waiting = (await service.request('GET', `/api/v1/agents/${careful.id}/runs`, { token: alice.token })).body.data;
    assert.equal(waiting.filter((run: Json) => run.status === 'requires_action').length, 1);
    for (const run of waiting.filter((each: Json) => each.status === 'requires_action'))
      await service.request('POST', `/api/v1/runs/${run.id}/cancel`, { token: alice.token });
  });

  test('a plain chat completion cancelled while its client waits is a 409 ConflictError (code cancelled), not retried', async () => {
    fake.reply({ hang: true });
    const pending = openai.chat.completions.create({ model: agent.id, messages: [{ role: 'user', content: 'Forever' }] });
    const running = await waitFor('the run to start', async () => {
      const runs = (await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: alice.token })).body.data;
      return runs.find((run: Json) => run.status === 'running');
    });
    assert.equal((await service.request('POST', `/api/v1/runs/${running.id}/cancel`, { token: alice.token })).status, 200);
    const error = await rejectsWith(pending, OpenAI.ConflictError, 409);
    assert.equal(error.code, 'cancelled');
    assert.equal(error.headers?.get('x-should-retry'), 'false');
  });
});
