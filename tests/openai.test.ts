// The OpenAI-compatible API under /v1, through the official `openai` package as its users call it:
// agents as models, chat completions and responses (plain and streamed) that run the agent against
// the fake model server (what it received is checked), stored responses continued, read back and
// deleted, and every error as the SDK's own class. Every call is a run of the service's API.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startService, type Json, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const fake = await startFakeOpenAI();
const service: TestService = await startService();
const alice = await service.signUp('Alice');
const bob = await service.signUp('Bob');
/** An API token of Alice's, as a user would make one for an OpenAI client. */
const apiToken: string = (await service.create(alice.token, '/api-tokens', { description: 'openai client' })).token;

const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-fake-0123456789' };
const prompt = await service.create(alice.token, '/prompts', {
  name: 'tutor',
  template: 'You teach {subject}.',
  input_variables: ['subject'],
});
const tutor = await service.create(alice.token, '/agents', { name: 'Tutor', type: 'VENDOR_A', llm, promptId: prompt.id });
const plain = await service.create(alice.token, '/agents', { name: 'Plain', type: 'VENDOR_A', llm });
const bobs = await service.create(bob.token, '/agents', { name: 'Bob’s', type: 'VENDOR_A', llm });

const client = (apiKey = apiToken, base: TestService = service) => new OpenAI({ baseURL: `${base.url}/v1`, apiKey, maxRetries: 0 });
const openai = client();

/** The run the service recorded for an OpenAI id (`chatcmpl-…`, `resp_…`), read through the service's own API. */
async function runOf(id: string, token = alice.token): Promise<Json> {
  const runId = id.replace(/^(chatcmpl-|resp_)/, '');
  const reply = await service.request('GET', `/api/v1/runs/${runId}`, { token });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data;
}

/** Asserts that `promise` rejects with the SDK's `type` of error, with this status and code; returns it. */
async function rejectsWith(
  promise: Promise<unknown>,
  type: abstract new (...args: any[]) => InstanceType<typeof OpenAI.APIError>,
  status: number,
  code?: string | null,
): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    assert.equal(error.status, status);
    if (code !== undefined) assert.equal(error.code, code);
    return error;
  }
  assert.fail(`expected ${type.name}`);
}

describe('models', () => {
  test("the caller's agents are its models; another user's agent is not found", async () => {
    const list = await openai.models.list();
    assert.deepEqual(
      list.data.map((model) => model.id),
      [tutor.id, plain.id],
    );
    for (const [model, agent] of [
      [list.data[0], tutor],
      [list.data[1], plain],
    ] as const) {
      assert.deepEqual(model, {
        id: agent.id,
        object: 'model',
        created: Math.floor(Date.parse(agent.createdAt) / 1000),
        owned_by: 'agent-service',
      });
    }
    assert.deepEqual(await openai.models.retrieve(tutor.id), list.data[0]);
    await rejectsWith(openai.models.retrieve(bobs.id), OpenAI.NotFoundError, 404, 'model_not_found');
    await rejectsWith(openai.models.retrieve('gpt-4o'), OpenAI.NotFoundError, 404, 'model_not_found');
  });
});

describe('chat completions', () => {
  test('a plain completion runs the agent: prompt, then the client’s system message, the conversation, the sampling settings', async () => {
    fake.reply({ text: 'Two.', usage: { prompt_tokens: 20, completion_tokens: 2 } });
    const before = fake.requests.length;
    const completion = await openai.chat.completions.create({
      model: tutor.id,
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'What is 1+1?' },
        { role: 'assistant', content: 'It is 2.' },
        { role: 'user', content: [{ type: 'text', text: 'And 1+1 again?' }] },
      ],
      metadata: { subject: 'arithmetic' },
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 50,
      stop: ['END'],
      seed: 7,
    });
    assert.match(completion.id, /^chatcmpl-/);
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.model, tutor.id);
    assert.equal(completion.choices[0].message.content, 'Two.');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.deepEqual(completion.usage, { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 });

    const sent = fake.requests[before].body;
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'You teach arithmetic.\n\nAnswer briefly.' },
      { role: 'user', content: 'What is 1+1?' },
      { role: 'assistant', content: 'It is 2.' },
      { role: 'user', content: 'And 1+1 again?' },
    ]);
    assert.deepEqual([sent.temperature, sent.top_p, sent.max_tokens, sent.stop, sent.seed], [0.2, 0.9, 50, ['END'], 7]);

    const run = await runOf(completion.id);
    assert.deepEqual(
      [run.status, run.agentId, run.input, run.output, run.sessionId],
      ['succeeded', tutor.id, 'And 1+1 again?', 'Two.', null],
    );
    assert.deepEqual(run.usage, { promptTokens: 20, completionTokens: 2 });
  });

  test('null sampling settings and null metadata are taken as not set, as OpenAI takes them', async () => {
    fake.reply({ text: 'Nulls are fine.' }, { text: 'Here too.' });
    const before = fake.requests.length;
    const nulls = { temperature: null, top_p: null, seed: null, metadata: null };
    const completion = await openai.chat.completions.create({ model: plain.id, messages: [{ role: 'user', content: 'Hi' }], ...nulls });
    assert.equal(completion.choices[0].message.content, 'Nulls are fine.');
    const response = await openai.responses.create({ model: plain.id, input: 'Hi', ...nulls } as never);
    assert.equal(response.output_text, 'Here too.');
    for (const sent of fake.requests.slice(before).map((request) => request.body)) {
      for (const name of ['temperature', 'top_p', 'seed']) assert.ok(!(name in sent), `${name} is not sent`);
    }
    // A prompt's variables still come from metadata: null is none, so a prompt that needs one says which.
    const error = await rejectsWith(
      openai.chat.completions.create({ model: tutor.id, messages: [{ role: 'user', content: 'Hi' }], metadata: null }),
      OpenAI.BadRequestError,
      400,
    );
    assert.equal(error.param, 'metadata.subject');
  });

  test('a streamed completion sends chunks, the usage last with include_usage, then [DONE]', async () => {
    fake.reply({ text: 'Hello there friend', usage: { prompt_tokens: 5, completion_tokens: 3 } });
    const stream = await openai.chat.completions.create({
      model: plain.id,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const ids = new Set(chunks.map((chunk) => chunk.id));
    assert.equal(ids.size, 1);
    for (const chunk of chunks) assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Hello there friend');
    assert.equal(chunks.at(-2)!.choices[0].finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.usage, null);
    const run = await runOf([...ids][0]);
    assert.deepEqual([run.status, run.output], ['succeeded', 'Hello there friend']);

    fake.reply({ text: 'No usage' });
    const without: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await openai.chat.completions.create({
      model: plain.id,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    })) {
      without.push(chunk);
    }
    assert.ok(without.every((chunk) => chunk.usage === undefined && chunk.choices.length === 1));
  });

  test('a request with its own tools, or without a last user message, is a BadRequestError; nothing runs', async () => {
    const before = fake.requests.length;
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    const refused = await rejectsWith(
      openai.chat.completions.create({ model: plain.id, messages: [{ role: 'user', content: 'Hi' }], tools }),
      OpenAI.BadRequestError,
      400,
    );
    assert.equal(refused.param, 'tools');
    assert.equal(refused.type, 'invalid_request_error');
    const last = await rejectsWith(
      openai.chat.completions.create({ model: plain.id, messages: [{ role: 'assistant', content: 'Hi' }] }),
      OpenAI.BadRequestError,
      400,
    );
    assert.equal(last.param, 'messages');
    const hot = await rejectsWith(
      openai.chat.completions.create({ model: plain.id, messages: [{ role: 'user', content: 'Hi' }], temperature: 5 }),
      OpenAI.BadRequestError,
      400,
    );
    assert.equal(hot.param, 'temperature');
    const variable = await rejectsWith(
      openai.chat.completions.create({ model: tutor.id, messages: [{ role: 'user', content: 'Hi' }] }),
      OpenAI.BadRequestError,
      400,
    );
    assert.equal(variable.param, 'metadata.subject');
    await rejectsWith(
      openai.chat.completions.create({ model: bobs.id, messages: [{ role: 'user', content: 'Hi' }] }),
      OpenAI.NotFoundError,
      404,
      'model_not_found',
    );
    assert.equal(fake.requests.length, before, 'the model was not called');
  });

  test('a wrong key is an AuthenticationError; /api/v1 keeps its envelope', async () => {
    const wrong = await rejectsWith(client('not-a-token').models.list(), OpenAI.AuthenticationError, 401, 'invalid_api_key');
    assert.equal(wrong.type, 'invalid_request_error');
    const envelope = await service.request('GET', '/api/v1/agents', { token: 'not-a-token' });
    assert.equal(envelope.status, 401);
    assert.equal(envelope.body.error.code, 'unauthorized');
    const unknown = await fetch(`${service.url}/v1/nothing`, { headers: { authorization: `Bearer ${apiToken}` } });
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error.type, 'invalid_request_error');
  });

  test('the model side failing is a 502 InternalServerError, and the run is recorded failed', async () => {
    fake.reply({ status: 500, message: 'the model is down' });
    const failed = await rejectsWith(
      openai.chat.completions.create({ model: plain.id, messages: [{ role: 'user', content: 'Hi' }] }),
      OpenAI.InternalServerError,
      502,
      'upstream_error',
    );
    assert.match(failed.message, /the model is down/);
    assert.equal(failed.headers?.get('x-should-retry'), 'false', 'a run was made: the SDK must not make another');
    const runs = await service.request('GET', `/api/v1/agents/${plain.id}/runs?limit=1`, { token: alice.token });
    assert.equal(runs.body.data[0].status, 'failed');

    fake.reply({ status: 500, message: 'down while streaming' });
    const stream = await openai.chat.completions.create({ model: plain.id, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    await assert.rejects(async () => {
      for await (const _chunk of stream);
    }, OpenAI.APIError);
  });
});

describe('limits', () => {
  test('beyond RUN_CONCURRENCY_PER_USER a RateLimitError with Retry-After; past RUN_TIMEOUT_MS a 504', async () => {
    const limited = await startService({ runs: { ...service.config.runs, concurrencyPerUser: 1, timeoutMs: 1500 } });
    const carol = await limited.signUp('Carol');
    const agent = await limited.create(carol.token, '/agents', { name: 'Slow', type: 'VENDOR_A', llm });
    const sdk = client(carol.token, limited);
    fake.reply({ hang: true });
    const before = fake.requests.length;
    const slow = rejectsWith(
      sdk.chat.completions.create({ model: agent.id, messages: [{ role: 'user', content: 'wait' }] }),
      OpenAI.InternalServerError,
      504,
      'upstream_timeout',
    );
    await fake.waitForRequests(before + 1);
    const limit = await rejectsWith(
      sdk.responses.create({ model: agent.id, input: 'me too' }),
      OpenAI.RateLimitError,
      429,
      'rate_limit_exceeded',
    );
    assert.equal(limit.headers?.get('retry-after'), '1');
    assert.equal(limit.headers?.get('x-should-retry'), null, 'nothing was started: retried as usual');
    assert.equal((await slow).headers?.get('x-should-retry'), 'false');
  });
});

describe('responses', () => {
  test('a plain response: output_text, usage, instructions after the prompt; a recorded run', async () => {
    fake.reply({ text: 'Photosynthesis.', usage: { prompt_tokens: 9, completion_tokens: 1 } });
    const before = fake.requests.length;
    const response = await openai.responses.create({
      model: tutor.id,
      input: 'How do plants eat?',
      instructions: 'One word.',
      metadata: { subject: 'biology' },
      temperature: 0.5,
      max_output_tokens: 20,
    });
    assert.match(response.id, /^resp_/);
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'completed');
    assert.equal(response.model, tutor.id);
    assert.equal(response.output_text, 'Photosynthesis.');
    assert.deepEqual(response.output[0], {
      id: response.output[0].id,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Photosynthesis.', annotations: [] }],
    });
    assert.deepEqual(response.usage, { input_tokens: 9, output_tokens: 1, total_tokens: 10 });
    assert.deepEqual([response.error, response.incomplete_details, response.instructions], [null, null, 'One word.']);
    const sent = fake.requests[before].body;
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'You teach biology.\n\nOne word.' },
      { role: 'user', content: 'How do plants eat?' },
    ]);
    assert.deepEqual([sent.temperature, sent.max_tokens], [0.5, 20]);
    const run = await runOf(response.id);
    assert.deepEqual([run.status, run.input, run.output], ['succeeded', 'How do plants eat?', 'Photosynthesis.']);
    assert.ok(run.sessionId, 'a stored response is a turn of a session');
  });

  test('a streamed response: every semantic event in order, numbered from 0; the SDK’s stream helper gets the text', async () => {
    fake.reply({ text: 'Green leaves work', usage: { prompt_tokens: 4, completion_tokens: 3 } });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await openai.responses.create({ model: plain.id, input: 'Tell me', stream: true })) events.push(event);
    assert.deepEqual(
      events.map((event) => event.type),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    assert.deepEqual(
      events.map((event) => event.sequence_number),
      events.map((_event, index) => index),
    );
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    assert.equal(deltas.map((event) => event.delta).join(''), 'Green leaves work');
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    assert.equal(completed.response.output_text, 'Green leaves work');
    assert.deepEqual(completed.response.usage, { input_tokens: 4, output_tokens: 3, total_tokens: 7 });
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    assert.equal(created.response.id, completed.response.id);
    assert.equal(created.response.status, 'in_progress');
    assert.equal((await runOf(completed.response.id)).output, 'Green leaves work');

    fake.reply({ text: 'Via the helper' });
    const final = await openai.responses.stream({ model: plain.id, input: 'Again' }).finalResponse();
    assert.equal(final.output_text, 'Via the helper');

    fake.reply({ status: 500, message: 'broken model' });
    const failed: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await openai.responses.create({ model: plain.id, input: 'Fail', stream: true })) failed.push(event);
    const last = failed.at(-1) as OpenAI.Responses.ResponseFailedEvent;
    assert.equal(last.type, 'response.failed');
    assert.equal(last.response.status, 'failed');
    assert.equal(last.response.error?.code, 'server_error');
    assert.match(last.response.error?.message ?? '', /broken model/);
    assert.equal((await runOf(last.response.id)).status, 'failed');
  });

  test('previous_response_id continues the conversation of an agent without memory; store: false keeps nothing to continue', async () => {
    fake.reply({ text: 'Hello Ann.' }, { text: 'You are Ann.' }, { text: 'Still Ann.' });
    const first = await openai.responses.create({ model: plain.id, input: 'I am Ann.' });
    const second = await openai.responses.create({ model: plain.id, input: 'Who am I?', previous_response_id: first.id });
    const before = fake.requests.length;
    const third = await openai.responses.create({
      model: plain.id,
      input: [
        { role: 'developer', content: 'Be kind.' },
        { role: 'user', content: 'Sure?' },
      ],
      previous_response_id: second.id,
    });
    assert.equal(third.previous_response_id, second.id);
    const [system, ...conversation] = fake.requests[before].body.messages;
    assert.match(
      system.content,
      /^You are a helpful assistant\..*\n\nBe kind\.$/s,
      'the default system message, then the developer message',
    );
    assert.deepEqual(conversation, [
      { role: 'user', content: 'I am Ann.' },
      { role: 'assistant', content: 'Hello Ann.' },
      { role: 'user', content: 'Who am I?' },
      { role: 'assistant', content: 'You are Ann.' },
      { role: 'user', content: 'Sure?' },
    ]);
    const sessions = new Set(await Promise.all([first, second, third].map(async (response) => (await runOf(response.id)).sessionId)));
    assert.equal(sessions.size, 1, 'one session holds the conversation');

    fake.reply({ text: 'Not kept.' });
    const unstored = await openai.responses.create({ model: plain.id, input: 'Forget me', store: false, previous_response_id: third.id });
    assert.equal(unstored.output_text, 'Not kept.');
    assert.equal((await runOf(unstored.id)).status, 'succeeded', 'the run is recorded all the same');
    await rejectsWith(openai.responses.retrieve(unstored.id), OpenAI.NotFoundError, 404);
    const cannot = await rejectsWith(
      openai.responses.create({ model: plain.id, input: 'Again', previous_response_id: unstored.id }),
      OpenAI.NotFoundError,
      404,
    );
    assert.equal(cannot.param, 'previous_response_id');
    // The unstored turn did not join the session it continued.
    fake.reply({ text: 'ok' });
    const after = fake.requests.length;
    await openai.responses.create({ model: plain.id, input: 'Last', previous_response_id: third.id });
    assert.ok(!JSON.stringify(fake.requests[after].body.messages).includes('Forget me'));

    await rejectsWith(
      openai.responses.create({ model: tutor.id, input: 'x', metadata: { subject: 's' }, previous_response_id: first.id }),
      OpenAI.BadRequestError,
      400,
    );
    const asBob = client(bob.token);
    await rejectsWith(asBob.responses.create({ model: bobs.id, input: 'x', previous_response_id: first.id }), OpenAI.NotFoundError, 404);
  });

  test('a stored response is read back and deleted with its turn; another user’s is not found', async () => {
    fake.reply({ text: 'Kept answer.' });
    const response = await openai.responses.create({ model: plain.id, input: 'Keep this' });
    const read = await openai.responses.retrieve(response.id);
    assert.deepEqual(
      [read.id, read.status, read.output_text, read.model, read.created_at],
      [response.id, 'completed', 'Kept answer.', plain.id, response.created_at],
    );
    // `include` (sent as include[]=…) is taken, as in a create's body: there is nothing more to include.
    const included = await openai.responses.retrieve(response.id, {
      include: ['message.output_text.logprobs', 'reasoning.encrypted_content'],
    });
    assert.equal(included.output_text, 'Kept answer.');
    assert.deepEqual(read.usage, response.usage);
    await rejectsWith(client(bob.token).responses.retrieve(response.id), OpenAI.NotFoundError, 404);
    await rejectsWith(client(bob.token).responses.delete(response.id), OpenAI.NotFoundError, 404);

    fake.reply({ text: 'Next.' });
    const next = await openai.responses.create({ model: plain.id, input: 'Next', previous_response_id: response.id });
    const deleted = await service.request('DELETE', `/v1/responses/${response.id}`, { token: apiToken, header: 'Authorization' });
    assert.deepEqual([deleted.status, deleted.body], [200, { id: response.id, object: 'response', deleted: true }]);
    await openai.responses.delete(next.id);
    await rejectsWith(openai.responses.retrieve(response.id), OpenAI.NotFoundError, 404);
    await rejectsWith(openai.responses.delete(response.id), OpenAI.NotFoundError, 404);
    const run = await service.request('GET', `/api/v1/runs/${response.id.slice('resp_'.length)}`, { token: alice.token });
    assert.equal(run.status, 404);
    const runOfNext = (await service.request('GET', `/api/v1/runs/${next.id.slice('resp_'.length)}`, { token: alice.token })).status;
    assert.equal(runOfNext, 404);
    const sessions = await service.listAll(alice.token, `/agents/${plain.id}/sessions`);
    for (const session of sessions) assert.ok(!session.title?.includes('Keep this'), 'the deleted turn left its session');
  });
});
