// The built-in `echo` provider, through HTTP: it answers with the input (plain and streamed word by
// word), reports usage, remembers turns like any model, answers the v0 endpoints, and calls a tool
// for each input line `/tool <function> <JSON arguments>` — as native tool calls for VENDOR_A
// agents and as ReAct text for REACT agents. No model server runs in this file: the operator's
// model URLs point at a closed port (tests/helpers.ts), so a model call that left the service fails.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorOf, startService, type Json, type TestService } from './helpers.js';
import { startRecordingServer } from './fixtures/recording-server.js';

interface SseEvent {
  event: string | undefined;
  data: string;
}

/** POSTs with `stream: true` and reads the whole event stream (comments dropped). */
async function stream(
  service: TestService,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; type: string; events: SseEvent[] }> {
  const response = await fetch(`${service.url}/api/v1${path}`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const events = text
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => ({
      event: lines.find((line) => line.startsWith('event: '))?.slice(7),
      data: lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    }));
  return { status: response.status, type: response.headers.get('content-type') ?? '', events };
}

// A plain HTTP tool's server: it answers the `input` it was POSTed, in capitals.
const shouter = await startRecordingServer((_req, res, body) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end(String((JSON.parse(body) as { input?: unknown }).input).toUpperCase());
});
after(() => shouter.server.close());

const service: TestService = await startService();
const alice = await service.signUp('Alice');
const shout = await service.create(alice.token, '/tools', {
  name: 'Shout',
  type: 'HOSTED_MODEL',
  metadata: { url: `${shouter.base}/shout` },
});

async function createAgent(body: Record<string, unknown> = {}): Promise<Json> {
  return service.create(alice.token, '/agents', {
    name: 'Parrot',
    type: 'VENDOR_A',
    llm: { provider: 'echo', model: 'parrot-1' },
    ...body,
  });
}

async function createAgentWithShout(type: 'VENDOR_A' | 'REACT'): Promise<Json> {
  const agent = await createAgent({ type });
  await service.create(alice.token, '/agent-tools', { agentId: agent.id, toolId: shout.id });
  return agent;
}

const invoke = (agentId: string, body: unknown) =>
  service.request('POST', `/api/v1/agents/${agentId}/invoke`, { token: alice.token, body });

const names = (events: SseEvent[]) => events.map((event) => event.event);
const tokensOf = (events: SseEvent[]) =>
  events.filter((event) => event.event === 'token').map((event) => JSON.parse(event.data).text as string);

describe('the echo provider', () => {
  test('a plain invoke answers the input, with the model name given and an estimate of usage; the run is recorded', async () => {
    const agent = await createAgent();
    const input = 'Hello there,\nparrot. Say it back!';
    const reply = await invoke(agent.id, { input });
    assert.equal(reply.status, 200, reply.text);
    const data = reply.body.data;
    assert.equal(data.output, input);
    assert.equal(data.model, 'parrot-1');
    assert.deepEqual(data.steps, []);
    assert.deepEqual(data.warnings, []);
    // About four characters a token: the answer's 34 characters are 9; the prompt holds the default system message too.
    assert.equal(data.usage.completionTokens, Math.ceil(input.length / 4));
    assert.ok(data.usage.promptTokens > data.usage.completionTokens, JSON.stringify(data.usage));

    const run = await service.request('GET', `/api/v1/runs/${data.runId}`, { token: alice.token });
    assert.equal(run.status, 200);
    assert.equal(run.body.data.status, 'succeeded');
    assert.equal(run.body.data.output, input);
    assert.equal(run.body.data.model, 'parrot-1');
    assert.deepEqual(run.body.data.usage, data.usage);
  });

  test('any case of the name, any model name; a baseUrl or key left from another provider is not used', async () => {
    const agent = await createAgent({
      llm: { provider: 'Echo', model: 'anything at all', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-unused-0123456789' },
    });
    const reply = await invoke(agent.id, { input: 'still here' });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.data.output, 'still here');
    assert.equal(reply.body.data.model, 'anything at all');
  });

  test('streamed: the run event, the answer word by word as token events, then done with the whole answer', async () => {
    const agent = await createAgent();
    const input = 'one two  three\nfour';
    const { status, type, events } = await stream(service, `/agents/${agent.id}/invoke`, alice.token, { input, stream: true });
    assert.equal(status, 200);
    assert.match(type, /^text\/event-stream/);
    assert.deepEqual(names(events), ['run', 'token', 'token', 'token', 'token', 'done']);
    assert.deepEqual(tokensOf(events), ['one ', 'two  ', 'three\n', 'four']);
    const done = JSON.parse(events.at(-1)!.data);
    assert.equal(done.output, input);
    assert.equal(done.runId, JSON.parse(events[0].data).runId);
    assert.equal(done.usage.completionTokens, Math.ceil(input.length / 4));
  });

  test("memory: each turn is kept in the session like any model's", async () => {
    const agent = await createAgent({ hasMemory: true });
    const first = await invoke(agent.id, { input: 'first' });
    assert.equal(first.status, 200, first.text);
    const sessionId = first.body.data.sessionId;
    assert.equal(typeof sessionId, 'string');
    const second = await invoke(agent.id, { input: 'second', sessionId });
    assert.equal(second.body.data.output, 'second');
    // The replayed turns make the second prompt longer than the first.
    assert.ok(second.body.data.usage.promptTokens > first.body.data.usage.promptTokens);
    const messages = await service.request('GET', `/api/v1/agents/${agent.id}/sessions/${sessionId}/messages`, { token: alice.token });
    assert.deepEqual(
      messages.body.data.map((m: Json) => [m.role, m.content]),
      [
        ['user', 'first'],
        ['assistant', 'first'],
        ['user', 'second'],
        ['assistant', 'second'],
      ],
    );
  });

  test('the original API: predict answers the input, plain and as raw token lines ending with [END]', async () => {
    const agent = await createAgent();
    const plain = await service.request('POST', `/api/v1/agents/${agent.id}/predict`, {
      token: alice.token,
      body: { input: { input: 'hi there' } },
    });
    assert.deepEqual(plain.body, { success: true, data: 'hi there' });
    const streamed = await stream(service, `/agents/${agent.id}/predict`, alice.token, {
      input: { input: 'hi there' },
      has_streaming: true,
    });
    assert.deepEqual(
      streamed.events.map((event) => event.data),
      ['hi ', 'there', '[END]'],
    );
  });

  test("VENDOR_A: a /tool line is a native tool call; the answer is the tool's result (plain and streamed)", async () => {
    const agent = await createAgentWithShout('VENDOR_A');
    const before = shouter.seen.length;
    const reply = await invoke(agent.id, { input: 'Please shout this:\n/tool shout {"input":"hello"}' });
    assert.equal(reply.status, 200, reply.text);
    const data = reply.body.data;
    assert.equal(data.output, 'HELLO');
    assert.equal(data.steps.length, 1);
    assert.deepEqual(
      { ...data.steps[0], ms: 0 },
      { tool: 'Shout', toolId: shout.id, function: 'shout', input: { input: 'hello' }, output: 'HELLO', ms: 0 },
    );
    assert.deepEqual(
      shouter.seen.slice(before).map((seen) => JSON.parse(seen.body)),
      [{ input: 'hello' }],
    );

    // Two lines: two calls in one reply, the answer their results in order.
    const both = await invoke(agent.id, { input: '/tool shout {"input":"a"}\n/tool shout {"input":"b"}' });
    assert.equal(both.body.data.output, 'A\nB');
    assert.deepEqual(
      both.body.data.steps.map((step: Json) => step.input),
      [{ input: 'a' }, { input: 'b' }],
    );

    const { events } = await stream(service, `/agents/${agent.id}/invoke`, alice.token, {
      input: '/tool shout {"input":"streamed"}',
      stream: true,
    });
    assert.deepEqual(names(events), ['run', 'tool_call', 'tool_result', 'token', 'done']);
    assert.deepEqual(JSON.parse(events[1].data), { id: 'echo_call_1', tool: 'Shout', function: 'shout', input: { input: 'streamed' } });
    assert.deepEqual(JSON.parse(events[2].data), { id: 'echo_call_1', output: 'STREAMED' });
    assert.deepEqual(tokensOf(events), ['STREAMED']);
    assert.equal(JSON.parse(events.at(-1)!.data).output, 'STREAMED');
  });

  test('REACT: a /tool line is an Action in ReAct text; the answer is the observation, and only it is streamed', async () => {
    const agent = await createAgentWithShout('REACT');
    const reply = await invoke(agent.id, { input: '/tool shout {"input":"hello"}' });
    assert.equal(reply.status, 200, reply.text);
    const data = reply.body.data;
    assert.equal(data.output, 'HELLO');
    assert.equal(data.steps.length, 1);
    assert.deepEqual(
      { ...data.steps[0], ms: 0 },
      { tool: 'Shout', toolId: shout.id, function: 'shout', input: { input: 'hello' }, output: 'HELLO', ms: 0 },
    );

    // One Action per reply: two lines, two rounds, then both observations.
    const both = await invoke(agent.id, { input: '/tool shout {"input":"a"}\n/tool shout {"input":"b"}' });
    assert.equal(both.body.data.output, 'A\nB');
    assert.deepEqual(
      both.body.data.steps.map((step: Json) => step.output),
      ['A', 'B'],
    );

    const { events } = await stream(service, `/agents/${agent.id}/invoke`, alice.token, {
      input: '/tool shout {"input":"streamed"}',
      stream: true,
    });
    assert.deepEqual(names(events), ['run', 'tool_call', 'tool_result', 'token', 'done']);
    assert.deepEqual(JSON.parse(events[1].data), { id: 'react_1', tool: 'Shout', function: 'shout', input: { input: 'streamed' } });
    assert.equal(tokensOf(events).join(''), 'STREAMED', 'none of the ReAct text around it');
    assert.equal(JSON.parse(events.at(-1)!.data).output, 'STREAMED');

    // Without a /tool line, a REACT agent with tools answers the input.
    const plain = await invoke(agent.id, { input: 'just words' });
    assert.equal(plain.body.data.output, 'just words');
    assert.deepEqual(plain.body.data.steps, []);
  });

  test('a /tool line naming no offered function comes back as the tool error; an agent without tools answers the line as is', async () => {
    const agent = await createAgentWithShout('VENDOR_A');
    const wrong = await invoke(agent.id, { input: '/tool whisper {}' });
    assert.equal(wrong.status, 200, wrong.text);
    assert.match(wrong.body.data.output, /^Error: There is no function named "whisper"; use one of: shout\./);
    assert.equal(wrong.body.data.steps[0].error, wrong.body.data.output.slice('Error: '.length));

    const toolless = await createAgent();
    const reply = await invoke(toolless.id, { input: '/tool shout {}' });
    assert.equal(reply.body.data.output, '/tool shout {}');
  });

  test("an unknown provider's 422 names echo among the providers", async () => {
    const agent = await createAgent({ llm: { provider: 'mystery', model: 'm' } });
    const reply = await invoke(agent.id, { input: 'hi' });
    assert.equal(reply.status, 422);
    assert.match(errorOf(reply).details![0].message, /"openai", "ollama", "openai-compatible", "echo"/);
  });
});
