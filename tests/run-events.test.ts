// What a run reports goes through one seam: an observer of the engine sees every event of every
// run, in order, exactly as the streamed invoke sends them (the stream subscribes to the same
// emitter). And a run can be given a conversation (the messages before its input, and system
// additions) instead of a session's memory, as a stateless chat-completions call needs.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService, waitFor, type Json } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import type { RunEvent, RunInfo } from '../src/runs/events.js';
import type { ToolFunction, ToolProvider } from '../src/lib/tool-contract.js';

const fake = await startFakeOpenAI();
after(() => fake.close());
const docs = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('The office cat is called Marmalade and sleeps on the printer.');
});
await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
after(() => docs.close());

const noTools: ToolProvider = async () => ({ tools: [], warnings: [] });
let tools = noTools;
const service = await startService(
  { ingestion: { enabled: true, concurrency: 1, maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateNetworks: true } },
  undefined,
  { toolProvider: (...args) => tools(...args) },
);
const user = await service.signUp();
const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-events-key-0123456789' };

const observed: { run: RunInfo; event: RunEvent }[] = [];
const stopObserving = service.app.runs.observe((run, event) => observed.push({ run, event }));
after(stopObserving);
/** The events observed for one run, as a stream would carry them (data through JSON). */
const observedOf = (runId: string) =>
  observed
    .filter((seen) => seen.run.runId === runId)
    .map(({ event }) => ({ event: event.name, data: JSON.parse(JSON.stringify(event.data)) }));

const add: ToolFunction = {
  name: 'add',
  description: 'Adds a and b.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  toolId: 'tool-add',
  toolName: 'Adder',
  call: async (args) => String((args as { a: number }).a + (args as { b: number }).b),
};

/** Streams an invoke and returns its events, each with its data parsed. */
async function streamInvoke(agentId: string, input: string): Promise<{ event: string | undefined; data: Json }[]> {
  const response = await fetch(`${service.url}/api/v1/agents/${agentId}/invoke`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input, stream: true }),
  });
  assert.equal(response.status, 200);
  const text = await response.text();
  return text
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => ({
      event: lines.find((line) => line.startsWith('event: '))?.slice(7),
      data: JSON.parse(
        lines
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n'),
      ),
    }));
}

describe('the event seam', () => {
  test('an observer sees every event of a streamed run in order, the same as the stream: run, sources, tool calls, tokens, done', async () => {
    const doc = await service.create(user.token, '/documents', {
      name: 'Office notes',
      type: 'TXT',
      url: `http://127.0.0.1:${(docs.address() as AddressInfo).port}/notes.txt`,
    });
    await waitFor('the document to be ready', async () => {
      const got = await service.request('GET', `/api/v1/documents/${doc.id}`, { token: user.token });
      return got.body.data.status === 'ready' ? true : undefined;
    });
    const agent = await service.create(user.token, '/agents', { name: 'Cat keeper', type: 'VENDOR_A', llm, documentId: doc.id });
    tools = async () => ({ tools: [add], warnings: [] });
    try {
      fake.reply(
        { toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' }] },
        { text: 'Marmalade, and 5.', chunks: ['Marma', 'lade, ', 'and 5.'] },
      );
      const streamed = await streamInvoke(agent.id, 'What is the cat called, and 2 + 3?');
      assert.deepEqual(
        streamed.map((e) => e.event),
        ['run', 'sources', 'tool_call', 'tool_result', 'token', 'token', 'token', 'done'],
      );
      const runId = streamed[0].data.runId;
      assert.deepEqual(observedOf(runId), streamed, 'the observer saw exactly what the stream sent, in the same order');
      const seenRun = observed.find((seen) => seen.run.runId === runId)!.run;
      assert.deepEqual(seenRun, { runId, userId: user.user.id, agentId: agent.id, parentRunId: null });
      assert.deepEqual(streamed[2].data, { id: 'c1', tool: 'Adder', function: 'add', input: { a: 2, b: 3 } });
      assert.deepEqual(streamed[3].data, { id: 'c1', output: '5' });
      assert.deepEqual(
        streamed.slice(4, 7).map((e) => e.data.text),
        ['Marma', 'lade, ', 'and 5.'],
      );
      assert.equal(streamed[1].data[0].documentName, 'Office notes');
      assert.equal(streamed[7].data.output, 'Marmalade, and 5.');
    } finally {
      tools = noTools;
    }
  });

  test('a failed run ends with its error for the observer as for the stream', async () => {
    const agent = await service.create(user.token, '/agents', { name: 'Broken', type: 'VENDOR_A', llm });
    fake.reply({ status: 500, message: 'the model crashed' });
    const streamed = await streamInvoke(agent.id, 'hi');
    assert.deepEqual(
      streamed.map((e) => e.event),
      ['run', 'error'],
    );
    assert.equal(streamed[1].data.code, 'upstream_error');
    assert.deepEqual(observedOf(streamed[0].data.runId), streamed);
  });

  test('a plain invoke is observed too: run, its answer as one token, then done with the answer it returned', async () => {
    const agent = await service.create(user.token, '/agents', { name: 'Plain', type: 'VENDOR_A', llm });
    fake.reply({ text: 'plain answer' });
    const reply = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'hi' } });
    assert.equal(reply.status, 200);
    assert.deepEqual(observedOf(reply.body.data.runId), [
      { event: 'run', data: { runId: reply.body.data.runId, sessionId: null } },
      { event: 'token', data: { text: 'plain answer' } },
      { event: 'done', data: reply.body.data },
    ]);
  });
});

describe('a run given a conversation', () => {
  test("the model gets the agent's prompt and the caller's instructions, the messages before, then the input; memory is neither read nor written", async () => {
    const prompt = await service.create(user.token, '/prompts', {
      name: 'terse',
      template: 'You are terse about {topic}.',
      input_variables: ['topic'],
    });
    const agent = await service.create(user.token, '/agents', {
      name: 'Chat',
      type: 'VENDOR_A',
      llm,
      promptId: prompt.id,
      hasMemory: true,
    });
    // The session an invoke would replay: a run given its conversation must not see it.
    fake.reply({ text: 'remembered answer' });
    assert.equal(
      (
        await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
          token: user.token,
          body: { input: 'remembered question', sessionId: 's1', variables: { topic: 'cats' } },
        })
      ).status,
      200,
    );

    const engine = service.app.runs;
    const prepared = await engine.prepare(user.user.id, agent.id, {
      input: 'And its colour?',
      variables: { topic: 'cats' },
      sessionId: null,
      stream: true,
      messages: [
        { role: 'user', content: 'What is the cat called?' },
        { role: 'assistant', content: 'Marmalade.' },
      ],
      instructions: ['Answer in one word.', 'Never apologise.'],
    });
    const events: RunEvent[] = [];
    prepared.events.subscribe((event) => events.push(event));
    fake.reply({ text: 'Orange.', chunks: ['Ora', 'nge.'] });
    const before = fake.requests.length;
    const outcome = await engine.execute(prepared);
    assert.ok(outcome.ok);
    assert.equal(outcome.result.output, 'Orange.');
    assert.equal(outcome.result.sessionId, null, "no session: the conversation is the caller's");
    assert.deepEqual(fake.requests[before].body.messages, [
      { role: 'system', content: 'You are terse about cats.\n\nAnswer in one word.\n\nNever apologise.' },
      { role: 'user', content: 'What is the cat called?' },
      { role: 'assistant', content: 'Marmalade.' },
      { role: 'user', content: 'And its colour?' },
    ]);
    assert.deepEqual(
      events.map((event) => event.name),
      ['run', 'token', 'token', 'done'],
      'a subscriber of the run sees its events',
    );

    const sessions = await service.request('GET', `/api/v1/agents/${agent.id}/sessions`, { token: user.token });
    assert.deepEqual(
      sessions.body.data.map((s: Json) => [s.id, s.messages]),
      [['s1', 2]],
      'the run added no turn to any session',
    );
    const run = await service.request('GET', `/api/v1/runs/${outcome.result.runId}`, { token: user.token });
    assert.equal(run.body.data.status, 'succeeded');
    assert.equal(run.body.data.input, 'And its colour?');
  });

  test('instructions without a prompt follow the default system message', async () => {
    const agent = await service.create(user.token, '/agents', { name: 'Bare', type: 'VENDOR_A', llm });
    const prepared = await service.app.runs.prepare(user.user.id, agent.id, {
      input: 'hi',
      variables: {},
      sessionId: null,
      stream: false,
      messages: [],
      instructions: ['Speak French.'],
    });
    fake.reply({ text: 'Salut.' });
    const before = fake.requests.length;
    assert.ok((await service.app.runs.execute(prepared)).ok);
    const sent = fake.requests[before].body.messages;
    assert.equal(sent.length, 2);
    assert.match(sent[0].content, /^You are a helpful assistant\..*\n\nSpeak French\.$/s);
    assert.deepEqual(sent[1], { role: 'user', content: 'hi' });
  });
});
