// Tool approval: an agent-tool link with `requiresApproval` makes the model's calls of that tool wait
// for a person. The run pauses `requires_action` (a plain invoke answers 202 with the waiting
// calls, a stream ends with `requires_action`), gives up its slot, survives a restart, expires
// after RUN_APPROVAL_TTL_MS, and goes on once POST /runs/{id}/actions answers its calls — nested
// agent runs pausing and going on with the run that called them.
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorOf, startService, testConfig, waitFor, type Json, type TestService } from './helpers.js';
import OpenAI from 'openai';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const fake = await startFakeOpenAI();
after(() => fake.close());

// The tool's server: every call it got (the `input` the model gave), answered "launched <input>".
const launches: string[] = [];
const toolServer = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const input = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).input);
    launches.push(input);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`launched ${input}`);
  });
});
await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
after(() => toolServer.close());
const toolUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/launch`;

const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-approval-key-0123456789' };
// One run at a time per user: a waiting run must have given up its slot for the next to run.
const runsConfig = (changes: Partial<ReturnType<typeof testConfig>['runs']> = {}) => ({
  runs: { ...testConfig().runs, concurrencyPerUser: 1, ...changes },
});
const service = await startService(runsConfig());
const user = await service.signUp();

let tools = 0;
/** An agent with a plain HTTP tool `launch<n>` (the function has the same name), linked as asked. */
async function agentWithTool(svc: TestService, token: string, options: { type?: string; requiresApproval?: boolean } = {}) {
  tools += 1;
  const agent = await svc.create(token, '/agents', { name: `Launcher ${tools}`, type: options.type ?? 'VENDOR_A', llm });
  const tool = await svc.create(token, '/tools', {
    name: `launch${tools}`,
    type: 'HOSTED_MODEL',
    description: 'Launches a rocket.',
    metadata: { url: toolUrl },
  });
  const link = await svc.create(token, '/agent-tools', {
    agentId: agent.id,
    toolId: tool.id,
    ...(options.requiresApproval === undefined ? {} : { requiresApproval: options.requiresApproval }),
  });
  return { agent, tool, link, fn: tool.name as string };
}

const invoke = (svc: TestService, token: string, agentId: string, body: Json) =>
  svc.request('POST', `/api/v1/agents/${agentId}/invoke`, { token, body });
const answer = (svc: TestService, token: string, runId: string, body: unknown) =>
  svc.request('POST', `/api/v1/runs/${runId}/actions`, { token, body });
const getRun = async (svc: TestService, token: string, runId: string) =>
  (await svc.request('GET', `/api/v1/runs/${runId}`, { token })).body.data;
const runEnded = (svc: TestService, token: string, runId: string) =>
  waitFor(`run ${runId} to end`, async () => {
    const run = await getRun(svc, token, runId);
    return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : undefined;
  });

/**
 * A parent agent whose AGENT tool runs a child whose tool needs approval, run once on `svc`: the
 * chain paused, its top run and the nested run waiting with it.
 */
async function pausedChain(svc: TestService, token: string) {
  const child = await agentWithTool(svc, token, { requiresApproval: true });
  const parent = await svc.create(token, '/agents', { name: `Parent ${tools}`, type: 'VENDOR_A', llm });
  const ask = await svc.create(token, '/tools', { name: `askchild${tools}`, type: 'AGENT', metadata: { agentId: child.agent.id } });
  await svc.create(token, '/agent-tools', { agentId: parent.id, toolId: ask.id });
  fake.reply(
    { toolCalls: [{ id: 'call_1', name: ask.name, arguments: '{"query":"go"}' }] },
    { toolCalls: [{ id: 'call_1', name: child.fn, arguments: '{"input":"venus"}' }] },
  );
  const paused = await invoke(svc, token, parent.id, { input: 'Ask the child' });
  assert.equal(paused.status, 202);
  return { topId: paused.body.data.runId as string, childRunId: paused.body.data.actions[0].runId as string };
}

/** A `text/event-stream` body as its events (data parsed), with their `id:` when they have one. */
function parseEvents(text: string): { id?: number; event?: string; data: Json }[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const id = lines.find((line) => line.startsWith('id: '));
      return {
        ...(id ? { id: Number(id.slice(4)) } : {}),
        event: lines.find((line) => line.startsWith('event: '))?.slice(7),
        data: JSON.parse(
          lines
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n'),
        ),
      };
    });
}

async function stream(svc: TestService, token: string, method: 'GET' | 'POST', path: string, body?: Json) {
  const response = await fetch(`${svc.url}/api/v1${path}`, {
    method,
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  assert.equal(response.status, 200);
  return parseEvents(await response.text());
}

/** The messages the model was sent in request `index` (of the fake's whole history). */
const sentTo = (index: number) => fake.requests[index].body.messages as Json[];

describe('requiresApproval on agent-tool links', () => {
  test('is false unless asked, set on create and by PATCH, and shown with the link everywhere', async () => {
    const plain = await agentWithTool(service, user.token);
    assert.equal(plain.link.requiresApproval, false);
    const asked = await agentWithTool(service, user.token, { requiresApproval: true });
    assert.equal(asked.link.requiresApproval, true);

    const changed = await service.request('PATCH', `/api/v1/agent-tools/${plain.link.id}`, {
      token: user.token,
      body: { requiresApproval: true },
    });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.data.requiresApproval, true);
    assert.equal(changed.body.data.toolId, plain.tool.id);
    assert.equal(
      (await service.request('GET', `/api/v1/agent-tools/${plain.link.id}`, { token: user.token })).body.data.requiresApproval,
      true,
    );
    const untouched = await service.request('PATCH', `/api/v1/agent-tools/${plain.link.id}`, { token: user.token, body: {} });
    assert.equal(untouched.body.data.requiresApproval, true);

    const links = await service.listAll(user.token, '/agent-tools');
    const expected = new Map([
      [plain.link.id, true],
      [asked.link.id, true],
    ]);
    for (const link of links) {
      assert.equal(typeof link.requiresApproval, 'boolean', link.id);
      if (expected.has(link.id)) assert.equal(link.requiresApproval, expected.get(link.id), link.id);
    }
    assert.equal(links.filter((link) => expected.has(link.id)).length, 2);

    const bad = await service.request('PATCH', `/api/v1/agent-tools/${plain.link.id}`, {
      token: user.token,
      body: { requiresApproval: 'yes' },
    });
    assert.equal(bad.status, 422);
    assert.equal(errorOf(bad).details?.[0].path, 'requiresApproval');
    const other = await service.signUp();
    const hidden = await service.request('PATCH', `/api/v1/agent-tools/${plain.link.id}`, {
      token: other.token,
      body: { requiresApproval: false },
    });
    assert.equal(hidden.status, 404);
    assert.equal(
      (await service.request('GET', `/api/v1/agent-tools/${plain.link.id}`, { token: user.token })).body.data.requiresApproval,
      true,
    );
  });
});

describe('a run that calls a tool needing approval', () => {
  test('a plain invoke answers 202 requires_action without making the call; approved, the call is made and the run succeeds in the same log', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    const before = fake.requests.length;
    const launched = launches.length;
    fake.reply({ toolCalls: [{ id: 'call_moon', name: fn, arguments: '{"input":"moon"}' }] });

    const paused = await invoke(service, user.token, agent.id, { input: 'Launch to the moon' });
    assert.equal(paused.status, 202);
    const action = { id: 'call_moon', tool: fn, function: fn, input: { input: 'moon' } };
    assert.deepEqual(paused.body.data, { runId: paused.body.data.runId, sessionId: null, status: 'requires_action', actions: [action] });
    const runId = paused.body.data.runId;
    assert.equal(launches.length, launched, 'the call waits');
    const waiting = await getRun(service, user.token, runId);
    assert.equal(waiting.status, 'requires_action');
    assert.deepEqual(waiting.actions, [action]);
    assert.equal(waiting.finishedAt, null);

    // Its slot was given up: another run of the user's goes (one at a time here).
    const plainAgent = await service.create(user.token, '/agents', { name: 'Other', type: 'VENDOR_A', llm });
    fake.reply({ text: 'Meanwhile.' });
    const other = await invoke(service, user.token, plainAgent.id, { input: 'hi' });
    assert.equal(other.status, 200);

    fake.reply({ text: 'Launched to the moon.' });

    const accepted = await answer(service, user.token, runId, { actions: [{ id: 'call_moon', approve: true }] });
    assert.equal(accepted.status, 202);
    assert.deepEqual(accepted.body.data, { runId, status: 'running' });
    const run = await runEnded(service, user.token, runId);
    assert.equal(run.status, 'succeeded', run.error);
    assert.equal(run.output, 'Launched to the moon.');
    assert.deepEqual(run.actions, []);
    assert.deepEqual(launches.slice(launched), ['moon']);
    assert.equal(run.steps.length, 1);
    assert.equal(run.steps[0].output, 'launched moon');
    // The model went on from the conversation it had: its call answered by the tool's result.
    const resumedRequest = sentTo(fake.requests.length - 1);
    assert.equal(fake.requests.length - before, 3);
    assert.deepEqual(
      resumedRequest.slice(-2).map((message) => message.role),
      ['assistant', 'tool'],
    );
    assert.equal(resumedRequest.at(-1)!.content, 'launched moon');
    assert.equal(resumedRequest.at(-2)!.tool_calls[0].id, 'call_moon');

    // The log: its start, the wait, then the call and the answer, numbered on, ending with done.
    const events = await stream(service, user.token, 'GET', `/runs/${runId}/events`);
    assert.deepEqual(
      events.map((event) => event.id),
      events.map((_, index) => index + 1),
    );
    const names = events.map((event) => event.event);
    assert.equal(names[0], 'run');
    assert.equal(names.filter((name) => name === 'run').length, 1);
    assert.deepEqual(names.slice(1, 4), ['requires_action', 'tool_call', 'tool_result']);
    assert.deepEqual(events[1].data, { runId, actions: [action] });
    assert.equal(names.at(-1), 'done');
    assert.equal(events.at(-1)!.data.output, 'Launched to the moon.');
    const tokens = events.filter((event) => event.event === 'token').map((event) => event.data.text);
    assert.equal(tokens.join(''), 'Launched to the moon.');
  });

  test('a run whose wait cannot be recorded fails, and its log ends with that failure', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_mars', name: fn, arguments: '{"input":"mars"}' }] });
    // The write that records the wait fails (a full disk, say).
    service.db.exec(
      "CREATE TEMP TRIGGER fail_pause BEFORE UPDATE OF status ON agent_runs WHEN NEW.status = 'requires_action' BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    let run;
    try {
      const started = await invoke(service, user.token, agent.id, { input: 'Launch to Mars', background: true });
      assert.equal(started.status, 202);
      run = await runEnded(service, user.token, started.body.data.runId);
    } finally {
      service.db.exec('DROP TRIGGER fail_pause');
    }
    assert.equal(run.status, 'failed');
    assert.match(run.error, /could not be kept waiting/);
    const response = await fetch(`${service.url}/api/v1/runs/${run.id}/events`, {
      headers: { Authorization: `Bearer ${user.token}` },
      signal: AbortSignal.timeout(3000),
    });
    const events = parseEvents(await response.text());
    assert.deepEqual(
      events.map((event) => event.event),
      ['run', 'requires_action', 'error'],
      'the log ends, it is not followed as if the run went on',
    );
    assert.equal(events.at(-1)!.data.code, 'internal');
  });

  test('a streamed invoke ends with requires_action; denied with a reason, the model is told so and the call is never made', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    const launched = launches.length;
    fake.reply({ toolCalls: [{ id: 'call_sun', name: fn, arguments: '{"input":"sun"}' }] }, { text: 'As you wish.' });
    const events = await stream(service, user.token, 'POST', `/agents/${agent.id}/invoke`, { input: 'Launch into the sun', stream: true });
    assert.deepEqual(
      events.map((event) => event.event),
      ['run', 'requires_action'],
    );
    const runId = events[0].data.runId;
    assert.deepEqual(events[1].data, { runId, actions: [{ id: 'call_sun', tool: fn, function: fn, input: { input: 'sun' } }] });

    const accepted = await answer(service, user.token, runId, { actions: [{ id: 'call_sun', approve: false, reason: 'Too hot.' }] });
    assert.equal(accepted.status, 202);
    const run = await runEnded(service, user.token, runId);
    assert.equal(run.status, 'succeeded', run.error);
    assert.equal(run.output, 'As you wish.');
    assert.equal(launches.length, launched, 'a denied call is not made');
    assert.equal(run.steps[0].error, 'The user denied this call: Too hot.');
    const told = sentTo(fake.requests.length - 1).at(-1)!;
    assert.equal(told.role, 'tool');
    assert.match(told.content, /The user denied this call: Too hot\./);
  });

  test('only calls of links that require approval wait; the others of the same reply are made first', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    const free = await service.create(user.token, '/tools', { name: `free${tools}`, type: 'HOSTED_MODEL', metadata: { url: toolUrl } });
    await service.create(user.token, '/agent-tools', { agentId: agent.id, toolId: free.id });
    const launched = launches.length;
    fake.reply(
      {
        toolCalls: [
          { id: 'call_free', name: free.name, arguments: '{"input":"free"}' },
          { id: 'call_held', name: fn, arguments: '{"input":"held"}' },
        ],
      },
      { text: 'Both done.' },
    );
    const paused = await invoke(service, user.token, agent.id, { input: 'Both' });
    assert.equal(paused.status, 202);
    assert.deepEqual(
      paused.body.data.actions.map((action: Json) => action.id),
      ['call_held'],
    );
    assert.deepEqual(launches.slice(launched), ['free']);
    const runId = paused.body.data.runId;
    assert.equal((await answer(service, user.token, runId, { actions: [{ id: 'call_held', approve: true }] })).status, 202);
    const run = await runEnded(service, user.token, runId);
    assert.equal(run.status, 'succeeded', run.error);
    assert.deepEqual(launches.slice(launched), ['free', 'held']);
    assert.deepEqual(
      run.steps.map((step: Json) => step.output),
      ['launched free', 'launched held'],
    );
    // Both results answer the reply, in its order.
    const sent = sentTo(fake.requests.length - 1);
    assert.deepEqual(
      sent.slice(-2).map((message) => [message.tool_call_id, message.content]),
      [
        ['call_free', 'launched free'],
        ['call_held', 'launched held'],
      ],
    );
  });
});

describe('a run begun through the OpenAI-compatible API', () => {
  /** The sampling settings of a request the model was sent (of the fake's whole history). */
  const samplingSentTo = (index: number) => {
    const { temperature, top_p, max_tokens, max_completion_tokens, seed, stop } = fake.requests[index].body;
    return { temperature, top_p, max_tokens, max_completion_tokens, seed, stop };
  };

  test("a background response's sampling settings are sent to the model again once its calls are approved", async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    const before = fake.requests.length;
    fake.reply({ toolCalls: [{ id: 'call_venus', name: fn, arguments: '{"input":"venus"}' }] }, { text: 'Venus reached.' });
    const started = await fetch(`${service.url}/v1/responses`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: agent.id,
        input: 'Go to Venus',
        background: true,
        temperature: 0.3,
        top_p: 0.8,
        max_output_tokens: 321,
        seed: 7,
      }),
    });
    const body = (await started.json()) as Json;
    assert.equal(started.status, 200, JSON.stringify(body));
    const runId = String(body.id).slice('resp_'.length);
    await waitFor(
      'the run to wait for approval',
      async () => (await getRun(service, user.token, runId)).status === 'requires_action' || undefined,
    );
    const asked = { temperature: 0.3, top_p: 0.8, max_tokens: 321, max_completion_tokens: undefined, seed: 7, stop: undefined };
    assert.deepEqual(samplingSentTo(before), asked);

    assert.equal((await answer(service, user.token, runId, { actions: [{ id: 'call_venus', approve: true }] })).status, 202);
    const run = await runEnded(service, user.token, runId);
    assert.equal(run.status, 'succeeded', run.error);
    assert.equal(run.output, 'Venus reached.');
    assert.equal(fake.requests.length - before, 2);
    assert.deepEqual(samplingSentTo(before + 1), asked, 'the resumed part sends the same settings');
  });
});

describe('a foreground run of the OpenAI-compatible API that reaches a call needing approval', () => {
  const client = new OpenAI({ apiKey: user.token, baseURL: `${service.url}/v1`, maxRetries: 0, timeout: 20_000 });
  /** The run an error names (where its calls are answered), as it stands. */
  const runNamedIn = async (message: string) => {
    const runId = /POST \/api\/v1\/runs\/([0-9a-f-]+)\/actions/.exec(message)?.[1];
    assert.ok(runId, `the message names the run: ${message}`);
    return getRun(service, user.token, runId);
  };

  test('a plain response is answered incomplete (requires_action) and waits; approved, it goes on', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_mars', name: fn, arguments: '{"input":"mars"}' }] }, { text: 'Mars reached.' });
    const response = await client.responses.create({ model: agent.id, input: 'Go to Mars' });
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'requires_action' });
    const runId = response.id.slice('resp_'.length);
    const run = await getRun(service, user.token, runId);
    assert.equal(run.status, 'requires_action');
    assert.deepEqual(
      run.actions.map((action: Json) => action.id),
      ['call_mars'],
    );
    assert.equal((await client.responses.retrieve(response.id)).status, 'incomplete');
    assert.equal((await answer(service, user.token, runId, { actions: [{ id: 'call_mars', approve: true }] })).status, 202);
    assert.equal((await runEnded(service, user.token, runId)).output, 'Mars reached.');
  });

  test('a plain chat completion is a 409 (ConflictError) naming where to answer; the run waits', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_moon', name: fn, arguments: '{"input":"moon"}' }] });
    const error = await client.chat.completions.create({ model: agent.id, messages: [{ role: 'user', content: 'Go to the Moon' }] }).then(
      () => assert.fail('a waiting run has no completion'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof OpenAI.ConflictError, String(error));
    const run = await runNamedIn(error.message);
    assert.equal(run.status, 'requires_action');
    assert.equal(run.agentId, agent.id);
    assert.equal((error.error as Json).type, 'invalid_request_error');
    assert.equal(error.code, 'requires_action');
    await service.request('POST', `/api/v1/runs/${run.id}/cancel`, { token: user.token });
  });

  test('a streamed chat completion ends with an error chunk naming where to answer, then [DONE]', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_sun', name: fn, arguments: '{"input":"sun"}' }] });
    const chunks = await client.chat.completions.create({
      model: agent.id,
      messages: [{ role: 'user', content: 'Go to the Sun' }],
      stream: true,
    });
    const error = await (async () => {
      for await (const chunk of chunks) void chunk;
    })().then(
      () => assert.fail('the stream ends with an error'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    const run = await runNamedIn(error.message);
    assert.equal(run.status, 'requires_action');
    assert.equal(run.agentId, agent.id);
    assert.equal(launches.includes('sun'), false, 'the call was not made');
    await service.request('POST', `/api/v1/runs/${run.id}/cancel`, { token: user.token });
  });
});

describe('answering the calls: bad input is a 4xx and changes nothing', () => {
  test('missing, unknown and repeated ids are 422 naming them; a bad body 422; another user 404; a run not waiting 409', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { requiresApproval: true });
    fake.reply({
      toolCalls: [
        { id: 'call_x', name: fn, arguments: '{"input":"x"}' },
        { id: 'call_y', name: fn, arguments: '{"input":"y"}' },
      ],
    });
    const paused = await invoke(service, user.token, agent.id, { input: 'Two' });
    assert.equal(paused.status, 202);
    const runId = paused.body.data.runId;
    const waiting = await getRun(service, user.token, runId);
    assert.deepEqual(
      waiting.actions.map((action: Json) => action.id),
      ['call_x', 'call_y'],
    );

    const cases: [unknown, string, RegExp][] = [
      [{ actions: [{ id: 'call_x', approve: true }] }, 'actions', /call_y/],
      [
        {
          actions: [
            { id: 'call_x', approve: true },
            { id: 'call_y', approve: true },
            { id: 'nope', approve: true },
          ],
        },
        'actions.2.id',
        /nope/,
      ],
      [
        {
          actions: [
            { id: 'call_x', approve: true },
            { id: 'call_x', approve: false },
            { id: 'call_y', approve: true },
          ],
        },
        'actions.1.id',
        /more than once/,
      ],
      [{ actions: [{ id: 'call_x', approve: 'yes' }] }, 'actions.0.approve', /true or false/],
      [{ actions: 'all' }, 'actions', /array/],
      [{ actions: [] }, 'actions', /at least one/],
      [{}, 'actions', /./],
      [{ actions: [{ id: 'call_x', approve: false, reason: 'r'.repeat(2001) }] }, 'actions.0.reason', /2000/],
    ];
    for (const [body, path, message] of cases) {
      const reply = await answer(service, user.token, runId, body);
      assert.equal(reply.status, 422, JSON.stringify(body).slice(0, 100));
      const issue = errorOf(reply).details?.find((detail) => detail.path === path);
      assert.ok(issue, `${path} in ${JSON.stringify(errorOf(reply).details)}`);
      assert.match(issue.message, message);
    }
    const notJson = await service.request('POST', `/api/v1/runs/${runId}/actions`, { token: user.token, raw: '{"actions": [' });
    assert.equal(notJson.status, 400);

    const other = await service.signUp();
    const foreign = await answer(service, other.token, runId, {
      actions: [
        { id: 'call_x', approve: true },
        { id: 'call_y', approve: true },
      ],
    });
    assert.equal(foreign.status, 404);
    assert.equal((await answer(service, user.token, '0'.repeat(26), { actions: [{ id: 'call_x', approve: true }] })).status, 404);

    const still = await getRun(service, user.token, runId);
    assert.equal(still.status, 'requires_action');
    assert.deepEqual(still.actions, waiting.actions);

    fake.reply({ text: 'Done twice.' });
    const both = {
      actions: [
        { id: 'call_y', approve: true },
        { id: 'call_x', approve: false },
      ],
    };
    const [first, second] = await Promise.all([answer(service, user.token, runId, both), answer(service, user.token, runId, both)]);
    assert.deepEqual([first.status, second.status].sort(), [202, 409]);
    const run = await runEnded(service, user.token, runId);
    assert.equal(run.status, 'succeeded', run.error);
    const again = await answer(service, user.token, runId, both);
    assert.equal(again.status, 409);
    assert.match(errorOf(again).message, /not waiting/);
  });
});

describe('an answer when every slot is taken', () => {
  /** A service of its own (one slot, two queued), a user, and their agent for the slow runs that take the slot. */
  async function busyService() {
    const busy = await startService(runsConfig({ queuePerUser: 2 }));
    const owner = await busy.signUp();
    const worker = await busy.create(owner.token, '/agents', { name: 'Worker', type: 'VENDOR_A', llm });
    /** A background run holding the slot for about 0.6 s. */
    const takeTheSlot = () => {
      fake.reply({ text: 'slow', chunks: ['s', 'l', 'o', 'w'], chunkDelayMs: 150 });
      return invoke(busy, owner.token, worker.id, { input: 'slow', background: true });
    };
    return { busy, owner, worker, takeTheSlot };
  }

  test('the run waits queued, first in line: it goes on before runs queued earlier, however many keep coming', async () => {
    const { busy, owner, worker } = await busyService();
    const { agent, fn } = await agentWithTool(busy, owner.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_w', name: fn, arguments: '{"input":"jupiter"}' }] });
    const paused = await invoke(busy, owner.token, agent.id, { input: 'Launch to Jupiter' });
    assert.equal(paused.status, 202);
    const waitingId = paused.body.data.runId;
    // The slot is taken by a slow run, and another waits in the queue behind it.
    fake.reply({ text: 'slow work done', chunks: ['slow ', 'work ', 'done'], chunkDelayMs: 150 });
    const slow = await invoke(busy, owner.token, worker.id, { input: 'slow', background: true });
    assert.equal(slow.body.data.status, 'running');
    const queued = await invoke(busy, owner.token, worker.id, { input: 'later', background: true });
    assert.equal(queued.body.data.status, 'queued');

    const before = fake.requests.length;
    const answered = await answer(busy, owner.token, waitingId, { actions: [{ id: 'call_w', approve: true }] });
    assert.equal(answered.status, 202, answered.text);
    assert.deepEqual(answered.body.data, { runId: waitingId, status: 'queued' });
    const meanwhile = await getRun(busy, owner.token, waitingId);
    assert.equal(meanwhile.status, 'queued');
    assert.deepEqual(meanwhile.actions, []);
    const again = await answer(busy, owner.token, waitingId, { actions: [{ id: 'call_w', approve: true }] });
    assert.equal(again.status, 409, 'answered once');
    // Followed while it waits for its slot: the stream stays open past its wait and ends with it.
    const followed = stream(busy, owner.token, 'GET', `/runs/${waitingId}/events`);

    // The answered run's next model call comes before the queued run's.
    fake.reply({ text: 'Jupiter reached.' }, { text: 'later work done' });
    const resumed = await runEnded(busy, owner.token, waitingId);
    assert.equal(resumed.status, 'succeeded', resumed.error);
    assert.equal(resumed.output, 'Jupiter reached.');
    const later = await runEnded(busy, owner.token, queued.body.data.runId);
    assert.equal(later.output, 'later work done');
    const events = await followed;
    assert.deepEqual(
      events.map((event) => event.event).filter((name) => name !== 'token'),
      ['run', 'requires_action', 'tool_call', 'tool_result', 'done'],
    );
    assert.equal(
      events
        .filter((event) => event.event === 'token')
        .map((event) => event.data.text)
        .join(''),
      'Jupiter reached.',
    );
    assert.deepEqual(
      fake.requests.slice(before).map((request) => (request.body.messages as Json[]).at(-1)!.content),
      ['launched jupiter', 'later'],
      'the answered run went on before the run queued earlier',
    );
  });

  test('a chain answered while every slot is taken, then cancelled: its nested run ends with it', async () => {
    const { busy, owner, takeTheSlot } = await busyService();
    const { topId, childRunId } = await pausedChain(busy, owner.token);
    const slow = await takeTheSlot();
    assert.equal((await answer(busy, owner.token, topId, { actions: [{ id: 'call_1', approve: true }] })).body.data.status, 'queued');
    assert.equal((await busy.request('POST', `/api/v1/runs/${topId}/cancel`, { token: owner.token })).status, 200);
    assert.equal((await getRun(busy, owner.token, topId)).status, 'cancelled');
    assert.equal((await getRun(busy, owner.token, childRunId)).status, 'cancelled', 'the nested run it was to take up ends too');
    await runEnded(busy, owner.token, slow.body.data.runId);
  });

  test('cancelled while it waits for a slot, it ends cancelled', async () => {
    const { busy, owner, takeTheSlot } = await busyService();
    const { agent, fn } = await agentWithTool(busy, owner.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_x', name: fn, arguments: '{"input":"pluto"}' }] });
    const waitingId = (await invoke(busy, owner.token, agent.id, { input: 'Pluto' })).body.data.runId;
    const slow = await takeTheSlot();
    assert.equal((await answer(busy, owner.token, waitingId, { actions: [{ id: 'call_x', approve: true }] })).body.data.status, 'queued');
    const launched = launches.length;
    const cancelled = await busy.request('POST', `/api/v1/runs/${waitingId}/cancel`, { token: owner.token });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal((await getRun(busy, owner.token, waitingId)).status, 'cancelled');
    await runEnded(busy, owner.token, slow.body.data.runId);
    assert.equal(launches.length, launched, 'its approved call was never made');
    const events = await stream(busy, owner.token, 'GET', `/runs/${waitingId}/events`);
    assert.deepEqual([events.at(-1)!.event, events.at(-1)!.data.code], ['error', 'cancelled']);
  });
});

describe('a waiting run and restarts', () => {
  test('survives a restart on the same database file and can be approved after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-approval-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const secretKey = randomBytes(32);
    const overrides = { ...runsConfig(), databasePath: join(dir, 'restart.db') };
    const first = await startService(overrides, undefined, { secretKey });
    const owner = await first.signUp();
    const { agent, fn } = await agentWithTool(first, owner.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_mars', name: fn, arguments: '{"input":"mars"}' }] });
    const paused = await invoke(first, owner.token, agent.id, { input: 'Mars, after a restart' });
    assert.equal(paused.status, 202);
    const runId = paused.body.data.runId;
    await first.close();

    const second = await startService(overrides, undefined, { secretKey });
    const waiting = await getRun(second, owner.token, runId);
    assert.equal(waiting.status, 'requires_action');
    assert.equal(waiting.actions[0].id, 'call_mars');
    const launched = launches.length;
    fake.reply({ text: 'Mars reached.' });
    assert.equal((await answer(second, owner.token, runId, { actions: [{ id: 'call_mars', approve: true }] })).status, 202);
    const run = await runEnded(second, owner.token, runId);
    assert.equal(run.status, 'succeeded', run.error);
    assert.equal(run.output, 'Mars reached.');
    assert.deepEqual(launches.slice(launched), ['mars']);
    const names = (await stream(second, owner.token, 'GET', `/runs/${runId}/events`)).map((event) => event.event);
    assert.deepEqual(names.slice(0, 4), ['run', 'requires_action', 'tool_call', 'tool_result']);
    assert.equal(names.at(-1), 'done');
  });

  test('a process stopped while a resumed chain ran: the waiting child ends with its interrupted top run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-approval-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const secretKey = randomBytes(32);
    const overrides = { ...runsConfig({ approvalTtlMs: 60_000 }), databasePath: join(dir, 'chain.db') };
    const first = await startService(overrides, undefined, { secretKey });
    const owner = await first.signUp();
    const { topId, childRunId } = await pausedChain(first, owner.token);
    await first.close();
    // As the file is when the process stops after the top run was answered and went on, before it
    // took up its child: the top run `running`, the child still waiting.
    const db = new Database(join(dir, 'chain.db'));
    db.prepare(`UPDATE agent_runs SET status = 'running', actions = '[]', state = NULL, finished_at = NULL WHERE id = ?`).run(topId);
    db.close();

    const second = await startService(overrides, undefined, { secretKey });
    const top = await getRun(second, owner.token, topId);
    assert.equal(top.status, 'failed');
    assert.match(top.error, /interrupted/);
    const orphan = await getRun(second, owner.token, childRunId);
    assert.equal(orphan.status, 'failed', 'the child does not wait for a run that will never take it up');
    assert.deepEqual(orphan.actions, []);
    const events = await stream(second, owner.token, 'GET', `/runs/${childRunId}/events`);
    assert.equal(events.at(-1)!.event, 'error');
    const refused = await answer(second, owner.token, childRunId, { actions: [{ id: 'call_1', approve: true }] });
    assert.equal(refused.status, 409);
    assert.match(errorOf(refused).message, /not waiting for approval \(it is failed\)/);
  });

  test('ends failed ("approval expired") after RUN_APPROVAL_TTL_MS, its log with error approval_expired', async () => {
    const short = await startService(runsConfig({ approvalTtlMs: 300 }));
    const owner = await short.signUp();
    const { agent, fn } = await agentWithTool(short, owner.token, { requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_late', name: fn, arguments: '{"input":"late"}' }] });
    const paused = await invoke(short, owner.token, agent.id, { input: 'Nobody answers' });
    assert.equal(paused.status, 202);
    const runId = paused.body.data.runId;
    const run = await runEnded(short, owner.token, runId);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /approval expired/);
    assert.deepEqual(run.actions, []);
    const events = await stream(short, owner.token, 'GET', `/runs/${runId}/events`);
    assert.deepEqual(events.at(-1), { id: events.length, event: 'error', data: { code: 'approval_expired', message: run.error } });
    assert.equal((await answer(short, owner.token, runId, { actions: [{ id: 'call_late', approve: true }] })).status, 409);
  });
});

describe('nested agent runs', () => {
  /** A parent agent whose AGENT tool runs a child agent whose tool needs approval. */
  async function chain() {
    const child = await agentWithTool(service, user.token, { requiresApproval: true });
    const parent = await service.create(user.token, '/agents', { name: `Parent ${tools}`, type: 'VENDOR_A', llm });
    const ask = await service.create(user.token, '/tools', { name: `ask${tools}`, type: 'AGENT', metadata: { agentId: child.agent.id } });
    await service.create(user.token, '/agent-tools', { agentId: parent.id, toolId: ask.id });
    return { child, parent, askFn: ask.name as string };
  }

  test('a child that needs approval pauses its whole chain; answering the top run takes up the child, then the parent', async () => {
    const { child, parent, askFn } = await chain();
    const launched = launches.length;
    const before = fake.requests.length;
    fake.reply(
      { toolCalls: [{ id: 'call_1', name: askFn, arguments: '{"query":"go to venus"}' }] },
      // The child's ids may repeat the parent's: the top run lists them uniquely.
      { toolCalls: [{ id: 'call_1', name: child.fn, arguments: '{"input":"venus"}' }] },
      { text: 'Venus launched.' },
      { text: 'The child says: Venus launched.' },
    );
    const paused = await invoke(service, user.token, parent.id, { input: 'Ask the child' });
    assert.equal(paused.status, 202);
    const topId = paused.body.data.runId;
    const [action] = paused.body.data.actions;
    assert.equal(paused.body.data.actions.length, 1);
    const childRunId = action.runId;
    assert.deepEqual(action, {
      id: 'call_1',
      tool: child.fn,
      function: child.fn,
      input: { input: 'venus' },
      runId: childRunId,
      agentId: child.agent.id,
    });
    const waitingChild = await getRun(service, user.token, childRunId);
    assert.equal(waitingChild.status, 'requires_action');
    assert.equal(waitingChild.parentRunId, topId);
    assert.equal(launches.length, launched);

    const nested = await answer(service, user.token, childRunId, { actions: [{ id: 'call_1', approve: true }] });
    assert.equal(nested.status, 409);
    assert.match(errorOf(nested).message, new RegExp(topId));

    assert.equal((await answer(service, user.token, topId, { actions: [{ id: 'call_1', approve: true }] })).status, 202);
    const top = await runEnded(service, user.token, topId);
    assert.equal(top.status, 'succeeded', top.error);
    assert.equal(top.output, 'The child says: Venus launched.');
    const childRun = await getRun(service, user.token, childRunId);
    assert.equal(childRun.status, 'succeeded', childRun.error);
    assert.equal(childRun.output, 'Venus launched.');
    assert.deepEqual(launches.slice(launched), ['venus']);
    assert.equal(fake.requests.length - before, 4);
    // The child went on from its own conversation, the parent from its own with the child's answer.
    assert.equal(sentTo(before + 2).at(-1)!.content, 'launched venus');
    assert.equal(sentTo(before + 3).at(-1)!.content, 'Venus launched.');
    assert.equal(top.steps.length, 1);
    assert.equal(top.steps[0].output, 'Venus launched.');
  });

  test('a child taken up that cannot go on (its endpoint no longer resolves) ends the log its followers read', async () => {
    // Host names resolve slowly, then not at all: the child's endpoint is checked again when it is taken up.
    const local = await startService(runsConfig(), undefined, {
      resolveHost: async () => {
        await new Promise((resolve) => setTimeout(resolve, 600));
        throw Object.assign(new Error('getaddrinfo ENOTFOUND model.example'), { code: 'ENOTFOUND' });
      },
    });
    const owner = await local.signUp();
    const { topId, childRunId } = await pausedChain(local, owner.token);
    const childAgentId = (await getRun(local, owner.token, childRunId)).agentId;
    const moved = await local.request('PATCH', `/api/v1/agents/${childAgentId}`, {
      token: owner.token,
      body: { llm: { ...llm, baseUrl: fake.url.replace('127.0.0.1', 'model.example') } },
    });
    assert.equal(moved.status, 200, moved.text);
    fake.reply({ text: 'The child could not go on.' });
    assert.equal((await answer(local, owner.token, topId, { actions: [{ id: 'call_1', approve: true }] })).status, 202);
    // Followed while its endpoint is being looked up.
    await waitFor('the child is taken up', async () =>
      (await getRun(local, owner.token, childRunId)).status === 'running' ? true : undefined,
    );
    const response = await fetch(`${local.url}/api/v1/runs/${childRunId}/events`, {
      headers: { Authorization: `Bearer ${owner.token}` },
      signal: AbortSignal.timeout(5000),
    });
    const events = parseEvents(await response.text());
    assert.equal(events.at(-1)!.event, 'error', 'the follower is told the child ended');
    const child = await runEnded(local, owner.token, childRunId);
    assert.equal(child.status, 'failed');
    assert.equal((await runEnded(local, owner.token, topId)).output, 'The child could not go on.');
    // Read again later, its log ends too (it is not taken for a run still going).
    const again = await fetch(`${local.url}/api/v1/runs/${childRunId}/events`, {
      headers: { Authorization: `Bearer ${owner.token}` },
      signal: AbortSignal.timeout(5000),
    });
    assert.equal(parseEvents(await again.text()).at(-1)!.event, 'error');
  });

  test('cancelling the waiting top run ends its waiting child too', async () => {
    const { child, parent, askFn } = await chain();
    fake.reply(
      { toolCalls: [{ id: 'call_a', name: askFn, arguments: '{"query":"go"}' }] },
      { toolCalls: [{ id: 'call_b', name: child.fn, arguments: '{"input":"pluto"}' }] },
    );
    const paused = await invoke(service, user.token, parent.id, { input: 'Ask' });
    assert.equal(paused.status, 202);
    const childRunId = paused.body.data.actions[0].runId;
    const cancelled = await service.request('POST', `/api/v1/runs/${paused.body.data.runId}/cancel`, { token: user.token });
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.data.status, 'cancelled');
    assert.equal((await getRun(service, user.token, childRunId)).status, 'cancelled');
  });
});

describe('a ReAct agent', () => {
  test('pauses at the action and goes on from its observation, its instructions given once', async () => {
    const { agent, fn } = await agentWithTool(service, user.token, { type: 'REACT', requiresApproval: true });
    const launched = launches.length;
    const before = fake.requests.length;
    fake.reply(
      { text: `Thought: I should launch.\nAction: ${fn}\nAction Input: {"input": "saturn"}` },
      { text: 'Thought: It is done.\nFinal Answer: Saturn is go.' },
    );
    const paused = await invoke(service, user.token, agent.id, { input: 'Go to Saturn' });
    assert.equal(paused.status, 202);
    assert.deepEqual(paused.body.data.actions, [{ id: 'react_1', tool: fn, function: fn, input: { input: 'saturn' } }]);
    const runId = paused.body.data.runId;
    assert.equal((await answer(service, user.token, runId, { actions: [{ id: 'react_1', approve: true }] })).status, 202);
    const run = await runEnded(service, user.token, runId);
    assert.equal(run.status, 'succeeded', run.error);
    assert.equal(run.output, 'Saturn is go.');
    assert.deepEqual(launches.slice(launched), ['saturn']);
    assert.equal(fake.requests.length - before, 2);
    const sent = sentTo(before + 1);
    assert.equal(sent.at(-1)!.content, 'Observation: launched saturn\nThought:');
    const instructions = sent.map((message) => String(message.content).split('Answer the following questions').length - 1);
    assert.equal(
      instructions.reduce((a, b) => a + b, 0),
      1,
    );
  });
});
