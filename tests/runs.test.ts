// Running agents end to end: the service talks to a fake OpenAI-compatible server (which the real
// `openai` client also accepts, tests/fake-openai.test.ts), and the tests check what the model
// received as well as what the client got.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertNotFound, errorOf, startService, waitFor, type Json, type TestService } from './helpers.js';
import { startFakeOpenAI, type FakeOpenAI } from './fixtures/fake-openai.js';
import type { ToolFunction, ToolProvider } from '../src/lib/tool-contract.js';
import { createApp } from '../src/app.js';
import { silentLogger, type Logger } from '../src/lib/log.js';
import { randomBytes } from 'node:crypto';

const KEY = 'sk-agent-key-0123456789abcdef';

interface SseEvent {
  event: string | undefined;
  data: string;
}

/** Splits an event-stream body into its events (comments dropped). */
function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.split('\n').every((line) => line.startsWith(':')))
    .map((block) => {
      const lines = block.split('\n').filter((line) => !line.startsWith(':'));
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return { event, data };
    });
}

/** POSTs and reads the whole event stream. */
async function stream(service: TestService, path: string, token: string, body: unknown) {
  const response = await fetch(`${service.url}/api/v1${path}`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { response, text, events: parseEvents(text) };
}

/** Reads a stream until `until` matches the text so far; returns the text and an abort for the request. */
async function streamUntil(service: TestService, path: string, token: string, body: unknown, until: (text: string) => boolean) {
  const controller = new AbortController();
  const response = await fetch(`${service.url}/api/v1${path}`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  let text = '';
  while (!until(text)) {
    const part = await reader.read();
    if (part.done) break;
    text += Buffer.from(part.value).toString();
  }
  return {
    response,
    text,
    reader,
    abort: () => controller.abort(),
    async rest() {
      for (let part = await reader.read(); !part.done; part = await reader.read()) text += Buffer.from(part.value).toString();
      return text;
    },
  };
}

const lines: string[] = [];
const capture: Logger = { info: (fields) => lines.push(JSON.stringify(fields)), error: (fields) => lines.push(JSON.stringify(fields)) };

// Started at the top so they outlive every test (a hook registered inside a test ends with it).
const fake: FakeOpenAI = await startFakeOpenAI();
/** The tools the runs of `service` are given: none, unless a test sets some. */
const noTools: ToolProvider = async () => ({ tools: [], warnings: [] });
let tools = noTools;
const service: TestService = await startService({ logRequests: true }, capture, { toolProvider: (...args) => tools(...args) });
const alice = await service.signUp('Alice');
const bob = await service.signUp('Bob');
const setup = async () => {};

function llm(extra: Record<string, unknown> = {}) {
  return { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: KEY, ...extra };
}

async function createAgent(token: string, body: Record<string, unknown> = {}): Promise<Json> {
  return service.create(token, '/agents', { name: 'Helper', type: 'VENDOR_A', llm: llm(), ...body });
}

const invoke = (token: string, agentId: string, body: unknown) =>
  service.request('POST', `/api/v1/agents/${agentId}/invoke`, { token, body });

after(() => {
  const all = lines.join('\n');
  assert.ok(lines.length > 100, 'the service logged its requests');
  assert.ok(!all.includes(KEY), 'the agent key never reaches a log line');
});

describe('invoke', () => {
  test("a plain invoke answers the model's text and records the run; the model got the system message, the input and the key", async () => {
    await setup();
    const agent = await createAgent(alice.token);
    fake.reply({ text: 'Hello, Alice!', usage: { prompt_tokens: 12, completion_tokens: 4 } });
    const before = fake.requests.length;
    const reply = await invoke(alice.token, agent.id, { input: 'Say hello' });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const data = reply.body.data;
    assert.equal(data.output, 'Hello, Alice!');
    assert.equal(data.model, 'fake-model');
    assert.equal(data.sessionId, null, 'no memory, no session given');
    assert.deepEqual(data.steps, []);
    assert.deepEqual(data.sources, []);
    assert.deepEqual(data.warnings, []);
    assert.deepEqual(data.usage, { promptTokens: 12, completionTokens: 4 });
    assert.ok(Number.isInteger(data.ms));

    const sent = fake.requests[before];
    assert.equal(sent.path, '/v1/chat/completions');
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    assert.equal(sent.body.model, 'fake-model');
    assert.equal(sent.body.messages[0].role, 'system');
    assert.deepEqual(sent.body.messages.at(-1), { role: 'user', content: 'Say hello' });
    assert.equal(sent.body.tools, undefined, 'no tools offered');

    const run = await service.request('GET', `/api/v1/runs/${data.runId}`, { token: alice.token });
    assert.equal(run.status, 200);
    assert.equal(run.body.data.status, 'succeeded');
    assert.equal(run.body.data.output, 'Hello, Alice!');
    assert.equal(run.body.data.input, 'Say hello');
    assert.equal(run.body.data.agentId, agent.id);
    assert.equal(run.body.data.parentRunId, null);
    assert.ok(run.body.data.finishedAt);
    const list = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: alice.token });
    assert.deepEqual(
      list.body.data.map((r: Json) => r.id),
      [data.runId],
    );

    // The key is never answered: not in the agent, its list, the run or the invoke answer.
    for (const body of [
      reply.body,
      run.body,
      list.body,
      (await service.request('GET', `/api/v1/agents/${agent.id}`, { token: alice.token })).body,
      (await service.request('GET', '/api/v1/agents', { token: alice.token })).body,
    ]) {
      assert.ok(!JSON.stringify(body).includes(KEY));
    }
  });

  test('the prompt filled with variables is the system message; a missing variable is a 422 and nothing runs', async () => {
    await setup();
    const prompt = await service.create(alice.token, '/prompts', {
      name: 'p',
      template: 'You speak {language}. Topic: {topic}. {{literal}}',
      input_variables: ['language', 'topic'],
    });
    const agent = await createAgent(alice.token, { promptId: prompt.id });
    fake.reply({ text: 'Oui.' });
    const before = fake.requests.length;
    const reply = await invoke(alice.token, agent.id, { input: 'Bonjour', variables: { language: 'French', topic: 'greetings' } });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(fake.requests[before].body.messages[0].content, 'You speak French. Topic: greetings. {literal}');

    const missing = await invoke(alice.token, agent.id, { input: 'Bonjour', variables: { language: 'French' } });
    assert.equal(missing.status, 422);
    assert.deepEqual(
      errorOf(missing).details?.map((d) => d.path),
      ['variables.topic'],
    );
    assert.equal(fake.requests.length, before + 1, 'the model was not called');
    const runs = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: alice.token });
    assert.equal(runs.body.data.length, 1, 'no run recorded for a 4xx');
  });

  test('bad bodies are 422 naming the field', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    for (const [body, path] of [
      [{}, 'input'],
      [{ input: '' }, 'input'],
      [{ input: 'x'.repeat(100_001) }, 'input'],
      [{ input: 'x', variables: { a: 1 } }, 'variables'],
      [{ input: 'x', stream: 'yes' }, 'stream'],
      [{ input: 'x', sessionId: '' }, 'sessionId'],
    ] as const) {
      const reply = await invoke(alice.token, agent.id, body);
      assert.equal(reply.status, 422, JSON.stringify(body).slice(0, 80));
      assert.deepEqual(
        errorOf(reply).details?.map((d) => d.path),
        [path],
      );
    }
  });

  test('streamed: run first, tokens in order, done last with the whole answer', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    fake.reply({ text: 'one two three', chunks: ['one ', 'two ', 'three'] });
    const { response, events } = await stream(service, `/agents/${agent.id}/invoke`, alice.token, { input: 'count', stream: true });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(events[0].event, 'run');
    const runEvent = JSON.parse(events[0].data);
    assert.ok(runEvent.runId);
    assert.deepEqual(
      events.filter((e) => e.event === 'token').map((e) => JSON.parse(e.data).text),
      ['one ', 'two ', 'three'],
    );
    const last = events.at(-1)!;
    assert.equal(last.event, 'done');
    const done = JSON.parse(last.data);
    assert.equal(done.output, 'one two three');
    assert.equal(done.runId, runEvent.runId);
    assert.equal(fake.requests.at(-1)!.body.stream, true);
  });
});

describe('memory', () => {
  test('an agent with memory replays its session oldest first; sessions stay apart; the counts show on the agent', async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: true });
    fake.reply({ text: 'Nice to meet you, Ada.' });
    const first = await invoke(alice.token, agent.id, { input: 'My name is Ada.' });
    assert.equal(first.status, 200);
    const sessionId = first.body.data.sessionId;
    assert.ok(sessionId, 'a new session was created');

    fake.reply({ text: 'Your name is Ada.' });
    const before = fake.requests.length;
    const second = await invoke(alice.token, agent.id, { input: 'What is my name?', sessionId });
    assert.equal(second.body.data.sessionId, sessionId);
    assert.deepEqual(fake.requests[before].body.messages.slice(1), [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Nice to meet you, Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);

    fake.reply({ text: 'I do not know.' });
    const other = await invoke(alice.token, agent.id, { input: 'What is my name?', sessionId: 'another-session' });
    assert.equal(other.body.data.sessionId, 'another-session');
    assert.equal(fake.requests.at(-1)!.body.messages.length, 2, 'another session starts empty');

    const shown = await service.request('GET', `/api/v1/agents/${agent.id}`, { token: alice.token });
    assert.deepEqual(shown.body.data.AgentMemory, { sessions: 2, messages: 6 });
    const sessions = await service.request('GET', `/api/v1/agents/${agent.id}/sessions`, { token: alice.token });
    assert.deepEqual(
      sessions.body.data.map((s: Json) => [s.id, s.messages]),
      [
        [sessionId, 4],
        ['another-session', 2],
      ],
    );
    const messages = await service.request('GET', `/api/v1/agents/${agent.id}/sessions/${sessionId}/messages`, { token: alice.token });
    assert.deepEqual(
      messages.body.data.map((m: Json) => [m.role, m.content]),
      [
        ['user', 'My name is Ada.'],
        ['assistant', 'Nice to meet you, Ada.'],
        ['user', 'What is my name?'],
        ['assistant', 'Your name is Ada.'],
      ],
    );
    assert.equal(messages.body.data[0].runId, first.body.data.runId);

    const deleted = await service.request('DELETE', `/api/v1/agents/${agent.id}/sessions/${sessionId}`, { token: alice.token });
    assert.equal(deleted.status, 200);
    assertNotFound(await service.request('GET', `/api/v1/agents/${agent.id}/sessions/${sessionId}/messages`, { token: alice.token }));
    const after = await service.request('GET', `/api/v1/agents/${agent.id}`, { token: alice.token });
    assert.deepEqual(after.body.data.AgentMemory, { sessions: 1, messages: 2 });
  });

  test("a session keeps its createdAt and each turn moves its updatedAt on; every message names its turn's run", async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: true });
    const session = async () => {
      const listed = await service.request('GET', `/api/v1/agents/${agent.id}/sessions`, { token: alice.token });
      assert.equal(listed.body.data.length, 1);
      return listed.body.data[0] as { id: string; createdAt: string; updatedAt: string; messages: number };
    };
    fake.reply({ text: 'one' });
    const first = await invoke(alice.token, agent.id, { input: 'first', sessionId: 'kept' });
    const made = await session();
    assert.deepEqual([made.id, made.messages, made.updatedAt], ['kept', 2, made.createdAt]);
    fake.reply({ text: 'two' });
    const second = await invoke(alice.token, agent.id, { input: 'second', sessionId: 'kept' });
    const moved = await session();
    assert.deepEqual([moved.messages, moved.createdAt], [4, made.createdAt]);
    assert.ok(moved.updatedAt > made.updatedAt, `${moved.updatedAt} is after ${made.updatedAt}`);
    const messages = await service.request('GET', `/api/v1/agents/${agent.id}/sessions/kept/messages`, { token: alice.token });
    const [firstRun, secondRun] = [first.body.data.runId, second.body.data.runId];
    assert.deepEqual(
      messages.body.data.map((m: Json) => [m.role, m.content, m.runId]),
      [
        ['user', 'first', firstRun],
        ['assistant', 'one', firstRun],
        ['user', 'second', secondRun],
        ['assistant', 'two', secondRun],
      ],
    );
  });

  test("a session's messages page one at a time by their ids; deleting a run takes its turn; deleting a session keeps the runs", async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: true });
    const runIds: string[] = [];
    for (const turn of [1, 2, 3]) {
      fake.reply({ text: `answer ${turn}` });
      const reply = await invoke(alice.token, agent.id, { input: `question ${turn}`, sessionId: 'paged' });
      runIds.push(reply.body.data.runId);
    }
    const path = `/api/v1/agents/${agent.id}/sessions/paged/messages`;
    const all = (await service.request('GET', path, { token: alice.token })).body.data as Json[];
    const expected = [1, 2, 3].flatMap((turn, k) => [
      ['user', `question ${turn}`, runIds[k]],
      ['assistant', `answer ${turn}`, runIds[k]],
    ]);
    assert.deepEqual(
      all.map((m) => [m.role, m.content, m.runId]),
      expected,
    );
    assert.equal(new Set([...all.map((m) => m.id), ...runIds]).size, 9, 'every message has an id of its own');
    for (const message of all) assert.match(message.createdAt, /^\d{4}-\d{2}-\d{2}T/);
    // Paged one at a time, each `after` the previous page's message: the same six, in order, each page with a next link but the last.
    const paged: Json[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const reply = await service.request('GET', `${path}?limit=1${after ? `&after=${after}` : ''}`, { token: alice.token });
      assert.equal(reply.status, 200);
      paged.push(...reply.body.data);
      if (!reply.headers.get('link')) break;
      after = reply.body.data.at(-1).id;
    }
    assert.deepEqual(paged, all);
    // Every message is a cursor to the ones after it.
    for (const [k, message] of all.entries()) {
      const rest = await service.request('GET', `${path}?after=${message.id}`, { token: alice.token });
      assert.deepEqual(rest.body.data, all.slice(k + 1), `after message ${k}`);
    }
    // A message id of another session (or none at all) is no cursor here.
    fake.reply({ text: 'elsewhere' });
    await invoke(alice.token, agent.id, { input: 'other', sessionId: 'other' });
    const otherMessages = await service.request('GET', `/api/v1/agents/${agent.id}/sessions/other/messages`, { token: alice.token });
    for (const id of [otherMessages.body.data[0].id, runIds[0]]) {
      assert.equal((await service.request('GET', `${path}?after=${id}`, { token: alice.token })).status, 422, id);
    }

    // Deleting the middle run takes its turn, and only its turn; the replay skips it too.
    // (A run with a session is also a stored response, which the OpenAI-compatible API deletes.)
    const deleted = await fetch(`${service.url}/v1/responses/resp_${runIds[1]}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${alice.token}` },
    });
    assert.equal(deleted.status, 200);
    const left = (await service.request('GET', path, { token: alice.token })).body.data as Json[];
    assert.deepEqual(left, [...all.slice(0, 2), ...all.slice(4)]);
    fake.reply({ text: 'answer 4' });
    await invoke(alice.token, agent.id, { input: 'question 4', sessionId: 'paged' });
    assert.deepEqual(
      fake.requests
        .at(-1)!
        .body.messages.slice(1)
        .map((m: Json) => m.content),
      ['question 1', 'answer 1', 'question 3', 'answer 3', 'question 4'],
    );
    const shown = await service.request('GET', `/api/v1/agents/${agent.id}`, { token: alice.token });
    assert.deepEqual(shown.body.data.AgentMemory, { sessions: 2, messages: 8 });

    // Deleting the session leaves its runs' records; the same session id then starts afresh.
    assert.equal((await service.request('DELETE', `/api/v1/agents/${agent.id}/sessions/paged`, { token: alice.token })).status, 200);
    for (const runId of [runIds[0], runIds[2]]) {
      const run = await service.request('GET', `/api/v1/runs/${runId}`, { token: alice.token });
      assert.equal(run.status, 200);
      assert.equal(run.body.data.sessionId, 'paged');
    }
    fake.reply({ text: 'fresh' });
    await invoke(alice.token, agent.id, { input: 'again', sessionId: 'paged' });
    assert.deepEqual(
      fake.requests.at(-1)!.body.messages.slice(1),
      [{ role: 'user', content: 'again' }],
      'nothing of the deleted session is replayed',
    );
    const fresh = (await service.request('GET', path, { token: alice.token })).body.data as Json[];
    assert.deepEqual(
      fresh.map((m) => [m.role, m.content]),
      [
        ['user', 'again'],
        ['assistant', 'fresh'],
      ],
    );
    const listed = await service.request('GET', `/api/v1/agents/${agent.id}/sessions`, { token: alice.token });
    assert.deepEqual(
      listed.body.data.map((session: Json) => [session.id, session.title, session.messages]),
      [
        ['other', 'other', 2],
        ['paged', 'again', 2],
      ],
    );
  });

  test('a session is named by the start of its first message (its `title`), null while it has none', async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: true });
    const long = `${'Otters '.repeat(20)}and more.`;
    for (const [sessionId, input] of [
      ['short', 'How do otters sleep?'],
      ['long', long],
      ['short', 'And beavers?'],
    ]) {
      fake.reply({ text: 'They float.' });
      assert.equal((await invoke(alice.token, agent.id, { input, sessionId })).status, 200);
    }
    // A run that fails keeps nothing in memory: its session stays without messages, so without a title.
    fake.reply({ status: 500, message: 'down' });
    await invoke(alice.token, agent.id, { input: 'Lost message', sessionId: 'empty' });
    const sessions = await service.request('GET', `/api/v1/agents/${agent.id}/sessions`, { token: alice.token });
    const titles = Object.fromEntries(sessions.body.data.map((s: Json) => [s.id, s.title]));
    assert.equal(titles.short, 'How do otters sleep?');
    assert.equal(titles.long, long.slice(0, 100));
    assert.equal(titles.long.length, 100);
    if ('empty' in titles) assert.equal(titles.empty, null);
    assert.deepEqual(
      Object.keys(titles)
        .filter((id) => id !== 'empty')
        .sort(),
      ['long', 'short'],
    );
  });

  test('only the last 10 turns are replayed', async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: true });
    for (let turn = 1; turn <= 12; turn += 1) {
      fake.reply({ text: `answer ${turn}` });
      assert.equal((await invoke(alice.token, agent.id, { input: `question ${turn}`, sessionId: 's' })).status, 200);
    }
    fake.reply({ text: 'last' });
    await invoke(alice.token, agent.id, { input: 'question 13', sessionId: 's' });
    const sent = fake.requests.at(-1)!.body.messages;
    assert.equal(sent.length, 1 + 20 + 1);
    assert.equal(sent[1].content, 'question 3', 'the oldest replayed turn is the third');
  });

  test('without memory nothing is stored or replayed, and a given session id is echoed', async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: false });
    fake.reply({ text: 'a' }, { text: 'b' });
    const first = await invoke(alice.token, agent.id, { input: 'one', sessionId: 'mine' });
    assert.equal(first.body.data.sessionId, 'mine');
    await invoke(alice.token, agent.id, { input: 'two', sessionId: 'mine' });
    assert.equal(fake.requests.at(-1)!.body.messages.length, 2);
    const shown = await service.request('GET', `/api/v1/agents/${agent.id}`, { token: alice.token });
    assert.equal(shown.body.data.AgentMemory, null);
    const sessions = await service.request('GET', `/api/v1/agents/${agent.id}/sessions`, { token: alice.token });
    assert.deepEqual(sessions.body.data, []);
  });
});

describe('documents as context', () => {
  test("a chunk of the agent's ready document reaches the model, numbered, and comes back as a source", async () => {
    const docs = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('The office cat is called Marmalade and sleeps on the printer.\n\nUnrelated paragraph about invoices.');
    });
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    after(() => docs.close());
    const withIngestion = await startService({
      ingestion: { enabled: true, concurrency: 1, maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateNetworks: true },
    });
    const user = await withIngestion.signUp();
    const doc = await withIngestion.create(user.token, '/documents', {
      name: 'Office notes',
      type: 'TXT',
      url: `http://127.0.0.1:${(docs.address() as AddressInfo).port}/notes.txt`,
    });
    await waitFor('the document to be ready', async () => {
      const got = await withIngestion.request('GET', `/api/v1/documents/${doc.id}`, { token: user.token });
      return got.body.data.status === 'ready' ? true : undefined;
    });
    const agent = await withIngestion.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm: llm(), documentId: doc.id });
    fake.reply({ text: 'Marmalade [1].' });
    const before = fake.requests.length;
    const reply = await withIngestion.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
      token: user.token,
      body: { input: 'What is the name of the cat?' },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const system = fake.requests[before].body.messages[0].content as string;
    assert.match(system, /\[1\] \(Office notes, part 1\)\nThe office cat is called Marmalade/);
    assert.equal(reply.body.data.sources.length, 1);
    const source = reply.body.data.sources[0];
    assert.equal(source.documentId, doc.id);
    assert.equal(source.documentName, 'Office notes');
    assert.equal(source.position, 0);
    assert.match(source.snippet, /cat/);
    assert.doesNotMatch(source.snippet, /<mark>/);

    fake.reply({ text: 'No idea.' });
    const unrelated = await withIngestion.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
      token: user.token,
      body: { input: 'what is the weather' },
    });
    assert.deepEqual(unrelated.body.data.sources, [], 'only stop words and unmatched words: no chunk');
  });
});

describe('failures', () => {
  test('an upstream error is a 502 in words with its status, never the key; the run is failed', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    fake.reply({ status: 401, message: `Incorrect API key provided: ${KEY}` });
    const reply = await invoke(alice.token, agent.id, { input: 'hi' });
    assert.equal(reply.status, 502);
    const error = errorOf(reply);
    assert.equal(error.code, 'upstream_error');
    assert.match(error.message, /answered 401/);
    assert.ok(!error.message.includes(KEY));
    const runs = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: alice.token });
    assert.equal(runs.body.data[0].status, 'failed');
    assert.ok(!JSON.stringify(runs.body).includes(KEY));

    fake.reply({ status: 500, message: 'the model crashed' });
    const crashed = await invoke(alice.token, agent.id, { input: 'hi' });
    assert.equal(crashed.status, 502);
    assert.match(errorOf(crashed).message, /answered 500: the model crashed/);
  });

  test('a model that refuses tools fails the run saying so', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    const tool = testTool('echo', async (args) => JSON.stringify(args));
    tools = async () => ({ tools: [tool], warnings: [] });
    try {
      fake.reply({ status: 400, message: 'registry.ollama.ai/library/gemma:2b does not support tools' });
      const reply = await invoke(alice.token, agent.id, { input: 'hi' });
      assert.equal(reply.status, 502);
      assert.match(errorOf(reply).message, /does not support tools/);
    } finally {
      tools = noTools;
    }
  });

  test('a streamed failure ends with an error event after the run event', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    fake.reply({ status: 500, message: 'boom' });
    const { events } = await stream(service, `/agents/${agent.id}/invoke`, alice.token, { input: 'hi', stream: true });
    assert.equal(events[0].event, 'run');
    assert.equal(events.at(-1)!.event, 'error');
    assert.equal(JSON.parse(events.at(-1)!.data).code, 'upstream_error');
  });

  test('a connection that breaks mid-answer is an upstream_error, in words', async () => {
    const agent = await createAgent(alice.token);
    fake.reply({ dropAfter: ['half an '] });
    const { events } = await stream(service, `/agents/${agent.id}/invoke`, alice.token, { input: 'hi', stream: true });
    assert.deepEqual(
      events.map((e) => e.event),
      ['run', 'token', 'error'],
    );
    const error = JSON.parse(events[2].data);
    assert.equal(error.code, 'upstream_error');
    assert.match(error.message, /broke before the answer was complete/);
  });

  test('no answer within RUN_TIMEOUT_MS is a 504 (plain) or an error event (streamed)', async () => {
    const slow = await startService({
      runs: {
        openaiBaseUrl: 'http://127.0.0.1:9/v1',
        ollamaBaseUrl: 'http://127.0.0.1:9/v1',
        timeoutMs: 300,
        concurrencyPerUser: 4,
        maxSteps: 8,
        backgroundTimeoutMs: 1_800_000,
        queuePerUser: 100,
        approvalTtlMs: 86_400_000,
        eventsRetentionDays: 30,
      },
    });
    const user = await slow.signUp();
    const agent = await slow.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm: llm() });
    fake.reply({ hang: true });
    const reply = await slow.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'hi' } });
    assert.equal(reply.status, 504);
    assert.equal(errorOf(reply).code, 'upstream_timeout');
    await fake.waitForAbort(fake.requests.at(-1)!);

    fake.reply({ hangAfter: ['partial '] });
    const { events } = await stream(slow, `/agents/${agent.id}/invoke`, user.token, { input: 'hi', stream: true });
    assert.deepEqual(
      events.map((e) => e.event),
      ['run', 'token', 'error'],
    );
    assert.equal(JSON.parse(events[2].data).code, 'upstream_timeout');
  });

  test('more than RUN_CONCURRENCY_PER_USER runs at once is a 429 with Retry-After; other users are not held up', async () => {
    const one = await startService({
      runs: {
        openaiBaseUrl: 'http://127.0.0.1:9/v1',
        ollamaBaseUrl: 'http://127.0.0.1:9/v1',
        timeoutMs: 5000,
        concurrencyPerUser: 1,
        maxSteps: 8,
        backgroundTimeoutMs: 1_800_000,
        queuePerUser: 100,
        approvalTtlMs: 86_400_000,
        eventsRetentionDays: 30,
      },
    });
    const user = await one.signUp();
    const other = await one.signUp();
    const agent = await one.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm: llm() });
    const otherAgent = await one.create(other.token, '/agents', { name: 'a', type: 'VENDOR_A', llm: llm() });
    fake.reply({ hangAfter: ['working '] });
    const open = await streamUntil(one, `/agents/${agent.id}/invoke`, user.token, { input: 'long', stream: true }, (text) =>
      text.includes('event: token'),
    );
    const refused = await one.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'again' } });
    assert.equal(refused.status, 429);
    assert.equal(errorOf(refused).code, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    fake.reply({ text: 'fine' });
    const fine = await one.request('POST', `/api/v1/agents/${otherAgent.id}/invoke`, { token: other.token, body: { input: 'hi' } });
    assert.equal(fine.status, 200);
    const runId = JSON.parse(parseEvents(open.text)[0].data).runId;
    open.abort();
    await waitFor('the run to end', async () => {
      const got = await one.request('GET', `/api/v1/runs/${runId}`, { token: user.token });
      return got.body.data.status === 'cancelled' ? true : undefined;
    });
    fake.reply({ text: 'again' });
    const retry = await one.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'again' } });
    assert.equal(retry.status, 200, 'the slot is free once the run ended');
  });

  test('providers: an unknown one is a 422 naming the providers when run; a baseUrl refused when run is a 422 saying why', async () => {
    await setup();
    const unknown = await createAgent(alice.token, { llm: { provider: 'mystery', model: 'm' } });
    const reply = await invoke(alice.token, unknown.id, { input: 'hi' });
    assert.equal(reply.status, 422);
    assert.match(errorOf(reply).details![0].message, /"openai", "ollama", "openai-compatible"/);
    // An agent saved before openai-compatible needed a baseUrl when saved.
    const compatible = await createAgent(alice.token, { llm: { provider: 'openai', model: 'm' } });
    service.db.prepare(`UPDATE agents SET llm_provider = 'openai-compatible' WHERE id = ?`).run(compatible.id);
    const noBase = await invoke(alice.token, compatible.id, { input: 'hi' });
    assert.equal(noBase.status, 422);
    assert.equal(errorOf(noBase).details![0].path, 'llm.baseUrl');

    // A host name is checked when the agent runs: here it resolves to loopback.
    const guarded = await startService({ allowPrivateNetworks: false }, undefined, {
      resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const user = await guarded.signUp();
    const agent = await guarded.create(user.token, '/agents', {
      name: 'a',
      type: 'VENDOR_A',
      llm: llm({ baseUrl: fake.url.replace('127.0.0.1', 'models.test') }),
    });
    const before = fake.requests.length;
    const refused = await guarded.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
      token: user.token,
      body: { input: 'hi', stream: true },
    });
    assert.equal(refused.status, 422, 'decided before the run: JSON even when streamed');
    const detail = errorOf(refused).details![0];
    assert.equal(detail.path, 'llm.baseUrl');
    assert.match(detail.message, /loopback/);
    assert.equal(fake.requests.length, before);
  });

  test('provider names match case-insensitively and ollama uses the operator endpoint with a placeholder key', async () => {
    const operator = await startService({
      runs: {
        openaiBaseUrl: fake.url,
        openaiApiKey: 'sk-operator-key-000000',
        ollamaBaseUrl: fake.url,
        timeoutMs: 5000,
        concurrencyPerUser: 4,
        maxSteps: 8,
        backgroundTimeoutMs: 1_800_000,
        queuePerUser: 100,
        approvalTtlMs: 86_400_000,
        eventsRetentionDays: 30,
      },
    });
    const user = await operator.signUp();
    const ollama = await operator.create(user.token, '/agents', {
      name: 'a',
      type: 'VENDOR_A',
      llm: { provider: 'Ollama', model: 'llama3' },
    });
    fake.reply({ text: 'hi' });
    assert.equal(
      (await operator.request('POST', `/api/v1/agents/${ollama.id}/invoke`, { token: user.token, body: { input: 'x' } })).status,
      200,
    );
    assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer ollama');
    const openai = await operator.create(user.token, '/agents', {
      name: 'b',
      type: 'VENDOR_A',
      llm: { provider: 'OpenAI-Chat', model: 'gpt-x' },
    });
    fake.reply({ text: 'hi' });
    assert.equal(
      (await operator.request('POST', `/api/v1/agents/${openai.id}/invoke`, { token: user.token, body: { input: 'x' } })).status,
      200,
    );
    assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-operator-key-000000');
    // A user's own endpoint never gets the operator's key.
    const own = await operator.create(user.token, '/agents', {
      name: 'c',
      type: 'VENDOR_A',
      llm: { provider: 'openai', model: 'm', baseUrl: fake.url },
    });
    fake.reply({ text: 'hi' });
    await operator.request('POST', `/api/v1/agents/${own.id}/invoke`, { token: user.token, body: { input: 'x' } });
    assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer none');
  });
});

/** A tool defined in the test: the loop only knows the contract. */
function testTool(name: string, call: ToolFunction['call']): ToolFunction {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    toolId: `tool-${name}`,
    toolName: `Tool ${name}`,
    call,
  };
}

describe('tools in the loop', () => {
  test('native tool calls (streamed in pieces): tool_call/tool_result events, steps, role "tool" results; a failing tool is told to the model', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    const seen: unknown[] = [];
    const add = testTool('add', async (args) => {
      seen.push(args);
      const { a, b } = args as { a: number; b: number };
      return String(a + b);
    });
    const broken = testTool('broken', async () => {
      throw new Error('the service behind this tool is down');
    });
    tools = async () => ({ tools: [add, broken], warnings: ['a tool was left out: it needs metadata.url'] });
    try {
      fake.reply(
        {
          toolCalls: [
            { id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' },
            { id: 'c2', name: 'broken', arguments: '{}' },
          ],
          pieceSize: 4,
        },
        { text: 'The sum is 5.' },
      );
      const before = fake.requests.length;
      const { events } = await stream(service, `/agents/${agent.id}/invoke`, alice.token, { input: 'add 2 and 3', stream: true });
      assert.deepEqual(seen, [{ a: 2, b: 3 }], 'arguments assembled from pieces');
      const names = events.map((e) => e.event);
      assert.deepEqual(names, ['run', 'tool_call', 'tool_result', 'tool_call', 'tool_result', 'token', 'token', 'token', 'token', 'done']);
      assert.deepEqual(JSON.parse(events[1].data), { id: 'c1', tool: 'Tool add', function: 'add', input: { a: 2, b: 3 } });
      assert.deepEqual(JSON.parse(events[2].data), { id: 'c1', output: '5' });
      assert.deepEqual(JSON.parse(events[4].data), { id: 'c2', error: 'the service behind this tool is down' });
      const done = JSON.parse(events.at(-1)!.data);
      assert.equal(done.output, 'The sum is 5.');
      assert.deepEqual(done.warnings, ['a tool was left out: it needs metadata.url']);
      assert.equal(done.steps.length, 2);
      assert.deepEqual(
        { ...done.steps[0], ms: 0 },
        { tool: 'Tool add', toolId: 'tool-add', function: 'add', input: { a: 2, b: 3 }, output: '5', ms: 0 },
      );
      assert.equal(done.steps[1].error, 'the service behind this tool is down');

      const first = fake.requests[before].body;
      assert.deepEqual(
        first.tools.map((t: Json) => t.function.name),
        ['add', 'broken'],
      );
      const second = fake.requests[before + 1].body.messages;
      assert.equal(second.at(-3).role, 'assistant');
      assert.deepEqual(
        second.at(-3).tool_calls.map((c: Json) => c.function.arguments),
        ['{"a":2,"b":3}', '{}'],
      );
      assert.deepEqual(second.at(-2), { role: 'tool', tool_call_id: 'c1', content: '5' });
      assert.deepEqual(second.at(-1), { role: 'tool', tool_call_id: 'c2', content: 'Error: the service behind this tool is down' });

      const run = await service.request('GET', `/api/v1/runs/${done.runId}`, { token: alice.token });
      assert.equal(run.body.data.steps.length, 2);
      assert.deepEqual(run.body.data.warnings, ['a tool was left out: it needs metadata.url']);

      // Not streamed: the same loop through plain completions.
      fake.reply({ toolCalls: [{ name: 'add', arguments: '{"a":1,"b":1}' }] }, { text: '2' });
      const plain = await invoke(alice.token, agent.id, { input: 'add 1 and 1' });
      assert.equal(plain.body.data.output, '2');
      assert.equal(plain.body.data.steps[0].output, '2');
    } finally {
      tools = noTools;
    }
  });

  test('RUN_MAX_STEPS model calls without an answer fail the run with max_steps', async () => {
    const limited = await startService(
      {
        runs: {
          openaiBaseUrl: 'http://127.0.0.1:9/v1',
          ollamaBaseUrl: 'http://127.0.0.1:9/v1',
          timeoutMs: 5000,
          concurrencyPerUser: 4,
          maxSteps: 2,
          backgroundTimeoutMs: 1_800_000,
          queuePerUser: 100,
          approvalTtlMs: 86_400_000,
          eventsRetentionDays: 30,
        },
      },
      undefined,
      { toolProvider: async () => ({ tools: [testTool('again', async () => 'call me again')], warnings: [] }) },
    );
    const user = await limited.signUp();
    const agent = await limited.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm: llm() });
    fake.reply({ toolCalls: [{ name: 'again', arguments: '{}' }] }, { toolCalls: [{ name: 'again', arguments: '{}' }] });
    const before = fake.requests.length;
    const reply = await limited.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'loop' } });
    assert.equal(reply.status, 502);
    assert.equal(errorOf(reply).code, 'max_steps');
    assert.equal(fake.requests.length, before + 2);
  });

  test('a nested run: a tool runs another agent as a child run with parentRunId, no memory, and cycles are refused', async () => {
    const errors: string[] = [];
    let childId = '';
    const nested = await startService({}, undefined, {
      toolProvider: async (agent) => ({
        tools: [
          {
            ...testTool('ask', async () => ''),
            call: async (args, context) => {
              const target = (args as { agent: string }).agent === 'self' ? agent.id : childId;
              try {
                return await context.runChild(target, 'question from the parent');
              } catch (error) {
                errors.push((error as Error).message);
                throw error;
              }
            },
          },
        ],
        warnings: [],
      }),
    });
    const user = await nested.signUp();
    const child = await nested.create(user.token, '/agents', { name: 'child', type: 'VENDOR_A', llm: llm(), hasMemory: true });
    childId = child.id;
    const parent = await nested.create(user.token, '/agents', { name: 'parent', type: 'VENDOR_A', llm: llm() });
    fake.reply(
      { toolCalls: [{ name: 'ask', arguments: '{"agent":"child"}' }] },
      { text: 'child says hi' },
      { toolCalls: [{ name: 'ask', arguments: '{"agent":"self"}' }] },
      { text: 'done' },
    );
    const reply = await nested.request('POST', `/api/v1/agents/${parent.id}/invoke`, { token: user.token, body: { input: 'go' } });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.data.steps[0].output, 'child says hi');
    assert.match(reply.body.data.steps[1].error, /loop/);
    assert.match(errors[0], /loop/);
    const traces = await nested.request('GET', '/api/v1/traces', { token: user.token });
    const childRun = traces.body.data.find((run: Json) => run.agentId === child.id);
    assert.equal(childRun.parentRunId, reply.body.data.runId);
    assert.equal(childRun.sessionId, null);
    assert.equal(childRun.status, 'succeeded');
    const childAgent = await nested.request('GET', `/api/v1/agents/${child.id}`, { token: user.token });
    assert.deepEqual(childAgent.body.data.AgentMemory, { sessions: 0, messages: 0 }, 'a nested run remembers nothing');
  });
});

describe('streams end, whatever happens', () => {
  test('a client that disconnects cancels the upstream request and the run', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    fake.reply({ hangAfter: ['thinking '] });
    const open = await streamUntil(service, `/agents/${agent.id}/invoke`, alice.token, { input: 'long', stream: true }, (text) =>
      text.includes('event: token'),
    );
    const runId = JSON.parse(parseEvents(open.text)[0].data).runId;
    const upstream = fake.requests.at(-1)!;
    open.abort();
    await fake.waitForAbort(upstream);
    const run = await waitFor('the run to end', async () => {
      const got = await service.request('GET', `/api/v1/runs/${runId}`, { token: alice.token });
      return got.body.data.status === 'running' ? undefined : got.body.data;
    });
    assert.equal(run.status, 'cancelled');
  });

  test('a client of a plain invoke that goes away cancels the run too', async () => {
    const agent = await createAgent(alice.token);
    fake.reply({ hang: true });
    const controller = new AbortController();
    const pending = fetch(`${service.url}/api/v1/agents/${agent.id}/invoke`, {
      method: 'POST',
      headers: { Autorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'slow' }),
      signal: controller.signal,
    }).catch(() => undefined);
    const count = fake.requests.length;
    await waitFor('the model request', () =>
      fake.requests.length > count || fake.requests.at(-1)?.body?.messages?.at(-1)?.content === 'slow' ? true : undefined,
    );
    const upstream = fake.requests.at(-1)!;
    controller.abort();
    await pending;
    await fake.waitForAbort(upstream);
    const runs = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: alice.token });
    const run = await waitFor('the run to end', async () => {
      const got = await service.request('GET', `/api/v1/runs/${runs.body.data[0].id}`, { token: alice.token });
      return got.body.data.status === 'running' ? undefined : got.body.data;
    });
    assert.equal(run.status, 'cancelled');
  });

  test('keep-alive comments on an idle stream; shutdown ends it with an error event and marks the run failed', async () => {
    const local = await startService({}, silentLogger, { keepAliveMs: 30 });
    const user = await local.signUp();
    const agent = await local.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm: llm() });
    fake.reply({ hangAfter: ['x'] });
    const open = await streamUntil(
      local,
      `/agents/${agent.id}/invoke`,
      user.token,
      { input: 'hi', stream: true },
      (text) => (text.match(/: keep-alive/g) ?? []).length >= 2,
    );
    assert.ok((open.text.match(/: keep-alive/g) ?? []).length >= 2);
    const runId = JSON.parse(parseEvents(open.text)[0].data).runId;
    await local.app.stopBackgroundWork();
    const text = await open.rest();
    const events = parseEvents(text);
    assert.equal(events.at(-1)!.event, 'error');
    assert.equal(JSON.parse(events.at(-1)!.data).code, 'unavailable');
    const run = await local.request('GET', `/api/v1/runs/${runId}`, { token: user.token });
    assert.equal(run.body.data.status, 'failed');
    assert.match(run.body.data.error, /shutting down/);
  });

  test('runs left running by a stopped process are marked failed at start', async () => {
    await setup();
    const agent = await createAgent(alice.token);
    service.db
      .prepare(
        `INSERT INTO agent_runs (id, user_id, agent_id, status, input, model, started_at) VALUES ('stale-run', ?, ?, 'running', 'x', 'm', '2026-01-01T00:00:00.000000+00:00')`,
      )
      .run(alice.user.id, agent.id);
    const again = createApp({ db: service.db, config: service.config, secretKey: randomBytes(32), log: silentLogger });
    again.becomePrimary();
    await again.stopBackgroundWork();
    const run = await service.request('GET', '/api/v1/runs/stale-run', { token: alice.token });
    assert.equal(run.body.data.status, 'failed');
    assert.match(run.body.data.error, /interrupted/);
    assert.ok(run.body.data.finishedAt);
  });
});

describe('isolation and the original API', () => {
  test("another user's agent, run and sessions are 404s", async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: true });
    fake.reply({ text: 'x' });
    const run = await invoke(alice.token, agent.id, { input: 'hi', sessionId: 's1' });
    const before = fake.requests.length;
    assertNotFound(await invoke(bob.token, agent.id, { input: 'hi' }), 'invoke');
    assertNotFound(
      await service.request('POST', `/api/v1/agents/${agent.id}/predict`, { token: bob.token, body: { input: { input: 'hi' } } }),
      'predict',
    );
    assertNotFound(await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: bob.token }), 'runs');
    assertNotFound(await service.request('GET', `/api/v1/runs/${run.body.data.runId}`, { token: bob.token }), 'run');
    assertNotFound(await service.request('GET', `/api/v1/agents/${agent.id}/sessions`, { token: bob.token }), 'sessions');
    assertNotFound(await service.request('GET', `/api/v1/agents/${agent.id}/sessions/s1/messages`, { token: bob.token }), 'messages');
    assertNotFound(await service.request('DELETE', `/api/v1/agents/${agent.id}/sessions/s1`, { token: bob.token }), 'delete session');
    assertNotFound(await service.request('GET', `/api/v1/users/${alice.user.id}`, { token: bob.token }), 'user');
    assert.equal(fake.requests.length, before);
    const traces = await service.request('GET', '/api/v1/traces', { token: bob.token });
    assert.ok(!traces.body.data.some((r: Json) => r.id === run.body.data.runId));
  });

  test('predict answers the v0 shapes: plain text, and raw token lines ending with [END]', async () => {
    await setup();
    const agent = await createAgent(alice.token, { hasMemory: true });
    fake.reply({ text: 'plain answer' });
    const plain = await service.request('POST', `/api/v1/agents/${agent.id}/predict`, {
      token: alice.token,
      body: { input: { input: 'hi' } },
    });
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body, { success: true, data: 'plain answer' });
    assert.equal(plain.headers.get('x-session-id'), 'default');

    fake.reply({ text: 'line one\nline two', chunks: ['line one\nline', ' two'] });
    const { response, text } = await stream(service, `/agents/${agent.id}/predict`, alice.token, {
      input: { input: 'more' },
      has_streaming: true,
    });
    assert.equal(response.headers.get('x-session-id'), 'default');
    assert.match(text, /data: line one\ndata: line\n\n/);
    assert.match(text, /data:  two\n\n/);
    assert.ok(text.trimEnd().endsWith('data: [END]'));
    assert.equal(fake.requests.at(-1)!.body.messages.length, 4, 'the default session remembered the first turn');

    fake.reply({ status: 500, message: 'down' });
    const failed = await stream(service, `/agents/${agent.id}/predict`, alice.token, { input: { input: 'x' }, hasStreaming: true });
    assert.match(failed.text, /event: error\ndata: .*answered 500/);
    assert.ok(failed.text.trimEnd().endsWith('data: [END]'));
  });

  test('users/me and users/{id} answer the caller; traces list runs newest first', async () => {
    await setup();
    const me = await service.request('GET', '/api/v1/users/me', { token: alice.token });
    assert.equal(me.body.data.id, alice.user.id);
    assert.ok(!('password' in me.body.data));
    const byId = await service.request('GET', `/api/v1/users/${alice.user.id}`, { token: alice.token });
    assert.deepEqual(byId.body.data, me.body.data);
    const traces = await service.request('GET', '/api/v1/traces?limit=2', { token: alice.token });
    assert.equal(traces.body.data.length, 2);
    assert.ok(traces.body.data[0].startedAt >= traces.body.data[1].startedAt);
    const link = /<([^>]+)>; rel="next"/.exec(traces.headers.get('link') ?? '')![1];
    const next = await service.request('GET', new URL(link).pathname + new URL(link).search, { token: alice.token });
    assert.equal(next.status, 200);
    assert.ok(next.body.data.length > 0);
    assert.ok(next.body.data[0].startedAt <= traces.body.data[1].startedAt, 'the next page holds older runs');
    assert.ok(!next.body.data.some((r: Json) => traces.body.data.some((t: Json) => t.id === r.id)));
  });

  test('the library shows listed agents of every user, public fields only', async () => {
    await setup();
    const listed = await createAgent(bob.token, {
      name: 'Public helper',
      description: 'Helps.',
      avatarUrl: 'https://example.com/a.png',
      isListed: true,
    });
    const hidden = await createAgent(bob.token, { name: 'Private' });
    assert.equal(listed.isListed, true);
    assert.equal(listed.description, 'Helps.');
    assert.equal(hidden.isListed, false);
    const library = await service.request('GET', '/api/v1/agents/library', { token: alice.token });
    assert.equal(library.status, 200);
    const ids = library.body.data.map((a: Json) => a.id);
    assert.ok(ids.includes(listed.id));
    assert.ok(!ids.includes(hidden.id));
    const shown = library.body.data.find((a: Json) => a.id === listed.id);
    assert.deepEqual(shown, {
      id: listed.id,
      name: 'Public helper',
      description: 'Helps.',
      avatarUrl: 'https://example.com/a.png',
      type: 'VENDOR_A',
      llm: { model: 'fake-model', provider: 'openai-compatible' },
    });
    assert.ok(!JSON.stringify(library.body).includes(KEY));
    assert.ok(!JSON.stringify(library.body).includes(fake.url));
    // Listing does not open the agent itself to others.
    assertNotFound(await service.request('GET', `/api/v1/agents/${listed.id}`, { token: alice.token }));
  });

  test("deleting an agent deletes its runs and memory; deleting the account deletes the user's runs", async () => {
    await setup();
    const user = await service.signUp();
    const agent = await createAgent(user.token, { hasMemory: true });
    fake.reply({ text: 'x' });
    const run = await invoke(user.token, agent.id, { input: 'hi' });
    assert.equal(run.status, 200);
    const count = (sql: string, ...args: unknown[]) =>
      service.db
        .prepare(sql)
        .pluck()
        .get(...args) as number;
    const runId = (run.body as { data: { runId: string } }).data.runId;
    // The turn is kept on the run's record, in the agent's one session.
    assert.equal(count('SELECT count(*) FROM agent_runs WHERE id = ? AND session_seq IS NOT NULL', runId), 1);
    assert.equal(count('SELECT count(*) FROM agent_sessions WHERE agent_id = ?', agent.id), 1);
    await service.request('DELETE', `/api/v1/agents/${agent.id}`, { token: user.token });
    assert.equal(count('SELECT count(*) FROM agent_runs WHERE agent_id = ?', agent.id), 0);
    assert.equal(count('SELECT count(*) FROM agent_sessions WHERE agent_id = ?', agent.id), 0);

    const second = await createAgent(user.token);
    fake.reply({ text: 'x' });
    await invoke(user.token, second.id, { input: 'hi' });
    assert.equal(count('SELECT count(*) FROM agent_runs WHERE user_id = ?', user.user.id), 1);
    await service.request('DELETE', '/api/v1/auth/me', { token: user.token, body: { password: user.password } });
    assert.equal(count('SELECT count(*) FROM agent_runs WHERE user_id = ?', user.user.id), 0);
  });
});

describe('fields the original API has', () => {
  test('a tool description is stored, returned, changed and cleared', async () => {
    const tool = await service.create(alice.token, '/tools', {
      name: 'web',
      type: 'SEARCH',
      description: 'Searches the web.',
      metadata: { url: 'http://x' },
    });
    assert.equal(tool.description, 'Searches the web.');
    const bare = await service.create(alice.token, '/tools', { name: 'bare', type: 'SEARCH' });
    assert.equal(bare.description, null);
    const renamed = await service.request('PATCH', `/api/v1/tools/${tool.id}`, { token: alice.token, body: { name: 'web2' } });
    assert.equal(renamed.body.data.description, 'Searches the web.', 'a PATCH without description keeps it');
    const changed = await service.request('PATCH', `/api/v1/tools/${tool.id}`, {
      token: alice.token,
      body: { description: 'Finds pages.' },
    });
    assert.equal(changed.body.data.description, 'Finds pages.');
    const cleared = await service.request('PATCH', `/api/v1/tools/${tool.id}`, { token: alice.token, body: { description: null } });
    assert.equal(cleared.body.data.description, null);
    const listed = await service.request('GET', '/api/v1/tools', { token: alice.token });
    assert.equal(listed.body.data.find((t: Json) => t.id === tool.id).description, null);
  });

  test('agent description, avatarUrl and isListed are stored, returned and changed; a bad avatarUrl is a 422', async () => {
    const agent = await createAgent(alice.token);
    assert.deepEqual([agent.description, agent.avatarUrl, agent.isListed], [null, null, false]);
    const changed = await service.request('PATCH', `/api/v1/agents/${agent.id}`, {
      token: alice.token,
      body: { description: 'Answers questions.', avatarUrl: 'https://example.com/me.png', isListed: true },
    });
    assert.equal(changed.status, 200);
    assert.deepEqual(
      [changed.body.data.description, changed.body.data.avatarUrl, changed.body.data.isListed],
      ['Answers questions.', 'https://example.com/me.png', true],
    );
    const kept = await service.request('PATCH', `/api/v1/agents/${agent.id}`, { token: alice.token, body: { name: 'Renamed' } });
    assert.equal(kept.body.data.description, 'Answers questions.');
    const bad = await service.request('PATCH', `/api/v1/agents/${agent.id}`, {
      token: alice.token,
      body: { avatarUrl: 'javascript:alert(1)' },
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(
      errorOf(bad).details?.map((d) => d.path),
      ['avatarUrl'],
    );
  });
});
