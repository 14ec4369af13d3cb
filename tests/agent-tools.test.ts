// Agents using their tools, end to end: the service runs an agent against the fake model server,
// which answers with tool calls (also streamed in pieces) or ReAct text; fixture servers on
// 127.0.0.1 play an OpenAPI service, a SearXNG instance and a plain HTTP tool. Each test checks
// what the fixture received, what the model was given back and what the client got.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import type { Logger } from '../src/lib/log.js';
import type { Sealer } from '../src/lib/secrets.js';
import type { ToolProvider } from '../src/lib/tool-contract.js';
import { createGuardedFetch } from '../src/ingest/fetch.js';
import { createToolStore } from '../src/tools/store.js';
import { createToolProvider } from '../src/tools/runtime/provider.js';
import { startFakeOpenAI, type FakeOpenAI } from './fixtures/fake-openai.js';
import { startRecordingServer, type SeenRequest } from './fixtures/recording-server.js';
import { deepSpecText, refChainSpec } from './fixtures/openapi-specs.js';
import { startService, type Json, type TestService } from './helpers.js';

const SECRET = 'sk-tool-header-secret-9137';

const SPEC = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  servers: [{ url: '/api' }],
  paths: {
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        summary: 'Read one pet',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      },
    },
  },
};

let fixture: { base: string; seen: SeenRequest[]; server: http.Server };
let fake: FakeOpenAI;
let service: TestService;
const logLines: string[] = [];
const log: Logger = {
  info: (fields) => logLines.push(JSON.stringify(fields)),
  error: (fields) => logLines.push(JSON.stringify(fields)),
};

{
  fixture = await startRecordingServer((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === '/openapi.json') json(200, SPEC);
    else if (url.pathname === '/chain-spec.json') json(200, refChainSpec(6, 31, `${fixture.base}/api`));
    else if (url.pathname === '/deep-spec.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(deepSpecText(20_000, `${fixture.base}/api`));
    } else if (url.pathname.startsWith('/api/pets/')) json(200, { id: decodeURIComponent(url.pathname.slice(10)), name: 'Rex' });
    else if (url.pathname === '/search') {
      json(200, {
        results: Array.from({ length: 7 }, (_, i) => ({
          title: `Result ${i}`,
          url: `https://r.test/${i}`,
          content: `About ${url.searchParams.get('q')}${req.headers['x-api-key'] ? ` (key ${req.headers['x-api-key']})` : ''}`,
        })),
      });
    } else if (url.pathname === '/echo') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`echo ${JSON.parse(body).input} (key ${req.headers['x-api-key']})`);
    } else if (url.pathname === '/down') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('Service Unavailable');
    } else json(404, { error: 'no' });
  });
  fake = await startFakeOpenAI();
  service = await startService(
    {
      runs: {
        openaiBaseUrl: fake.url,
        openaiApiKey: 'operator-key',
        ollamaBaseUrl: fake.url,
        timeoutMs: 10_000,
        concurrencyPerUser: 4,
        maxSteps: 4,
        backgroundTimeoutMs: 1_800_000,
        queuePerUser: 100,
        approvalTtlMs: 86_400_000,
        eventsRetentionDays: 30,
      },
    },
    log,
  );
}

after(() => {
  fixture.server.closeAllConnections();
  fixture.server.close();
});

async function newUser() {
  const { token } = await service.signUp();
  return token;
}

async function agentWithTools(token: string, type: 'VENDOR_A' | 'REACT', tools: Json[], name = `${type} agent`): Promise<Json> {
  const agent = await service.create(token, '/agents', { name, type, llm: { provider: 'openai', model: 'fake-model' }, hasMemory: false });
  for (const body of tools) {
    const tool = await service.create(token, '/tools', body);
    await service.create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
  }
  return agent;
}

async function invoke(token: string, agentId: string, input: string) {
  return service.request('POST', `/api/v1/agents/${agentId}/invoke`, { token, body: { input } });
}

/** A streamed invoke, read whole: the named events in order. */
async function invokeStreamed(
  token: string,
  agentId: string,
  input: string,
): Promise<{ raw: string; events: { event: string; data: Json }[] }> {
  const response = await fetch(`${service.url}/api/v1/agents/${agentId}/invoke`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input, stream: true }),
  });
  assert.equal(response.status, 200);
  const raw = await response.text();
  const events = raw
    .split('\n\n')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return event ? { event, data: JSON.parse(data) } : undefined;
    })
    .filter((e): e is { event: string; data: Json } => e !== undefined);
  return { raw, events };
}

const lastRequest = () => fake.requests[fake.requests.length - 1];

describe('VENDOR_A: native tool calling', () => {
  it('a plain HTTP tool: the fixture gets {input} with the header, the model gets the answer, the client gets the reply', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'VENDOR_A', [
      {
        name: 'Shouter',
        type: 'HOSTED_MODEL',
        description: 'Echoes text.',
        metadata: { url: `${fixture.base}/echo`, headers: { 'X-Api-Key': SECRET } },
      },
    ]);
    const start = fake.requests.length;
    fake.reply({ toolCalls: [{ id: 'c1', name: 'shouter', arguments: '{"input":"hello"}' }] }, { text: 'The tool said hello.' });
    const reply = await invoke(token, agent.id, 'Say hello through the tool');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const data = reply.body.data;
    assert.equal(data.output, 'The tool said hello.');
    // The model was offered the function…
    const offered = fake.requests[start].body.tools;
    assert.deepEqual(
      offered.map((t: Json) => t.function.name),
      ['shouter'],
    );
    assert.equal(offered[0].function.description, 'Echoes text.');
    assert.deepEqual(offered[0].function.parameters.required, ['input']);
    // …the fixture saw the call…
    const call = fixture.seen.filter((s) => s.path === '/echo').at(-1)!;
    assert.deepEqual(JSON.parse(call.body), { input: 'hello' });
    assert.equal(call.headers['x-api-key'], SECRET);
    // …and the model got the result (the echoed key redacted).
    const toolMessage = fake.requests[start + 1].body.messages.at(-1);
    assert.deepEqual(toolMessage, { role: 'tool', tool_call_id: 'c1', content: 'echo hello (key [redacted])' });
    assert.equal(data.steps.length, 1);
    assert.deepEqual(
      { ...data.steps[0], ms: 0 },
      {
        tool: 'Shouter',
        toolId: data.steps[0].toolId,
        function: 'shouter',
        input: { input: 'hello' },
        output: 'echo hello (key [redacted])',
        ms: 0,
      },
    );
    const run = await service.request('GET', `/api/v1/runs/${data.runId}`, { token });
    assert.deepEqual(run.body.data.steps, data.steps);
    for (const text of [JSON.stringify(reply.body), JSON.stringify(run.body), logLines.join('\n')]) assert.ok(!text.includes(SECRET));
  });

  it('SEARCH, streamed with the tool call in pieces: tool_call and tool_result events, then the answer', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'VENDOR_A', [
      { name: 'Web search', type: 'SEARCH', metadata: { url: fixture.base, headers: { 'X-Api-Key': SECRET } } },
    ]);
    const start = fake.requests.length;
    fake.reply(
      { toolCalls: [{ id: 's1', name: 'web_search', arguments: '{"query":"sqlite wal"}' }], pieceSize: 2 },
      { text: 'WAL is a journal mode.' },
    );
    const { events, raw } = await invokeStreamed(token, agent.id, 'What is WAL?');
    assert.deepEqual(
      events.map((e) => e.event).filter((e) => e !== 'token'),
      ['run', 'tool_call', 'tool_result', 'done'],
    );
    const toolCall = events.find((e) => e.event === 'tool_call')!.data;
    assert.deepEqual(
      { id: toolCall.id, tool: toolCall.tool, input: toolCall.input },
      { id: 's1', tool: 'Web search', input: { query: 'sqlite wal' } },
    );
    assert.ok(fixture.seen.some((s) => s.path === '/search?q=sqlite+wal&format=json'));
    const results = JSON.parse(events.find((e) => e.event === 'tool_result')!.data.output);
    assert.equal(results.length, 5);
    assert.deepEqual(results[0], { title: 'Result 0', url: 'https://r.test/0', content: 'About sqlite wal (key [redacted])' });
    assert.equal(fixture.seen.find((s) => s.path === '/search?q=sqlite+wal&format=json')!.headers['x-api-key'], SECRET);
    assert.equal(JSON.parse(fake.requests[start + 1].body.messages.at(-1).content).length, 5);
    assert.equal(
      events
        .filter((e) => e.event === 'token')
        .map((e) => e.data.text)
        .join(''),
      'WAL is a journal mode.',
    );
    assert.equal(events.at(-1)!.data.output, 'WAL is a journal mode.');
    assert.ok(!raw.includes(SECRET));
  });

  it("OPENAPI: the operation is called on the spec's server with the metadata headers; bad arguments never reach it", async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'VENDOR_A', [
      { name: 'Pets', type: 'OPENAPI', metadata: { url: `${fixture.base}/openapi.json`, headers: { Authorization: `Bearer ${SECRET}` } } },
    ]);
    const start = fake.requests.length;
    const before = fixture.seen.filter((s) => s.path.startsWith('/api/')).length;
    fake.reply(
      {
        toolCalls: [
          { id: 'p1', name: 'pets_getpet', arguments: '{"petId":"7"}' },
          { id: 'p2', name: 'pets_getpet', arguments: '{"petId":7,"host":"evil.test"}' },
        ],
      },
      { text: 'Pet 7 is Rex.' },
    );
    const reply = await invoke(token, agent.id, 'Who is pet 7?');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(fake.requests[start].body.tools[0].function.parameters.required, ['petId']);
    const apiCalls = fixture.seen.filter((s) => s.path.startsWith('/api/'));
    assert.equal(apiCalls.length, before + 1, 'only the valid call was sent');
    assert.equal(apiCalls.at(-1)!.path, '/api/pets/7');
    assert.equal(apiCalls.at(-1)!.headers.authorization, `Bearer ${SECRET}`);
    const [good, bad] = reply.body.data.steps;
    assert.deepEqual(JSON.parse(good.output), { id: '7', name: 'Rex' });
    assert.match(bad.error, /^invalid arguments: .*\/petId must be string/);
    const messages = fake.requests[start + 1].body.messages;
    assert.match(messages.at(-1).content, /^Error: invalid arguments/);
    assert.equal(reply.body.data.output, 'Pet 7 is Rex.');
    assert.ok(!JSON.stringify(reply.body).includes(SECRET));
  });

  it('OPENAPI at the size limits: the tool set is built without stalling the service, whose /healthz answers within 1 s all through the run', async () => {
    const token = await newUser();
    // 31 operations whose bodies expand through $refs to 317 parts each: just under 10,000 in all.
    const agent = await agentWithTools(token, 'VENDOR_A', [
      { name: 'Chain', type: 'OPENAPI', metadata: { url: `${fixture.base}/chain-spec.json` } },
    ]);
    const start = fake.requests.length;
    fake.reply(
      { toolCalls: [{ id: 'c1', name: 'chain_op3', arguments: '{"body":{"a":{"b":{"a":{"b":{"a":{"b":{}}}}}}}}' }] },
      { text: 'Done.' },
    );
    let finished = false;
    const run = invoke(token, agent.id, 'Go').finally(() => (finished = true));
    let slowest = 0;
    while (!finished) {
      const asked = performance.now();
      assert.equal((await fetch(`${service.url}/healthz`)).status, 200);
      slowest = Math.max(slowest, performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const reply = await run;
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(reply.body.data.warnings, []);
    assert.equal(fake.requests[start].body.tools.length, 31);
    assert.match(
      reply.body.data.steps[0].error,
      /^invalid arguments: \/body\/a\/b\/a\/b\/a\/b must be string/,
      'the called operation was checked',
    );
    assert.ok(slowest < 1000, `/healthz took ${Math.round(slowest)} ms during the run`);
  });

  it('OPENAPI by URL nested too deep: the run goes on without the tool and says why', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'VENDOR_A', [
      { name: 'Deep', type: 'OPENAPI', metadata: { url: `${fixture.base}/deep-spec.json` } },
    ]);
    fake.reply({ text: 'No tools today.' });
    const reply = await invoke(token, agent.id, 'Go');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(reply.body.data.warnings, ['tool "Deep" (OPENAPI) is not offered: the spec nests more than 64 levels deep']);
  });

  it('a failing tool goes back to the model and into steps; a tool without what it needs is left out with a warning', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'VENDOR_A', [
      { name: 'Flaky', type: 'ENGINE_ALPHA', metadata: { url: `${fixture.base}/down`, headers: { 'X-Api-Key': SECRET } } },
      { name: 'Unset', type: 'SEARCH', metadata: {} },
    ]);
    const start = fake.requests.length;
    fake.reply({ toolCalls: [{ id: 'f1', name: 'flaky', arguments: '{"input":"x"}' }] }, { text: 'The service is down.' });
    const reply = await invoke(token, agent.id, 'Try it');
    assert.equal(reply.status, 200);
    const data = reply.body.data;
    assert.deepEqual(
      fake.requests[start].body.tools.map((t: Json) => t.function.name),
      ['flaky'],
    );
    assert.match(data.steps[0].error, /^127\.0\.0\.1:\d+ answered HTTP 503: Service Unavailable$/);
    assert.match(fake.requests[start + 1].body.messages.at(-1).content, /^Error: .*HTTP 503/);
    assert.deepEqual(data.warnings, ['tool "Unset" (SEARCH) is not offered: metadata.url is missing']);
    assert.equal(data.output, 'The service is down.');
    const run = await service.request('GET', `/api/v1/runs/${data.runId}`, { token });
    assert.equal(run.body.data.status, 'succeeded');
    assert.deepEqual(run.body.data.warnings, data.warnings);
  });

  it('hitting the step limit fails the run saying so', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'VENDOR_A', [
      { name: 'Shouter', type: 'HOSTED_MODEL', metadata: { url: `${fixture.base}/echo` } },
    ]);
    const loop = { toolCalls: [{ name: 'shouter', arguments: '{"input":"again"}' }] };
    fake.reply(loop, loop, loop, loop, loop);
    const start = fake.requests.length;
    const reply = await invoke(token, agent.id, 'Loop forever');
    assert.equal(reply.status, 502);
    assert.equal(reply.body.error.code, 'max_steps');
    assert.match(reply.body.error.message, /4 model calls/);
    assert.equal(fake.requests.length - start, 4);
    fake.reply({ text: 'drain' }); // the fifth scripted reply was not used
    await invoke(token, agent.id, 'x');
  });
});

describe('REACT: the text loop', () => {
  it('OPENAPI through ReAct: stop sequence, observation fed back, only the final answer returned and streamed', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'REACT', [
      { name: 'Pets', type: 'OPENAPI', metadata: { url: `${fixture.base}/openapi.json` } },
    ]);
    const start = fake.requests.length;
    fake.reply(
      {
        text: 'Thought: I should look it up.\nAction: pets_getpet\nAction Input: {"petId": "9"}\nObservation: (made up)\nFinal Answer: wrong',
      },
      { text: 'Thought: I now know the final answer\nFinal Answer: Pet 9 is Rex.' },
    );
    const { events } = await invokeStreamed(token, agent.id, 'Who is pet 9?');
    const first = fake.requests[start].body;
    assert.deepEqual(first.stop, ['\nObservation:']);
    assert.equal(first.tools, undefined, 'ReAct offers no native tools');
    assert.match(first.messages[0].content, /You have access to the following tools:\n\npets_getpet: Read one pet/);
    const second = fake.requests[start + 1].body.messages;
    assert.equal(second.at(-2).content, 'Thought: I should look it up.\nAction: pets_getpet\nAction Input: {"petId": "9"}');
    assert.equal(second.at(-1).content, 'Observation: {"id":"9","name":"Rex"}\nThought:');
    assert.ok(fixture.seen.some((s) => s.path === '/api/pets/9'));
    assert.equal(
      events
        .filter((e) => e.event === 'token')
        .map((e) => e.data.text)
        .join(''),
      'Pet 9 is Rex.',
    );
    const done = events.at(-1)!;
    assert.equal(done.event, 'done');
    assert.equal(done.data.output, 'Pet 9 is Rex.');
    assert.equal(done.data.steps[0].function, 'pets_getpet');
    assert.deepEqual(done.data.steps[0].input, { petId: '9' });
  });

  it('a plain Action Input is the only parameter; not streamed, the answer is the text after Final Answer:', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'REACT', [{ name: 'Web search', type: 'SEARCH', metadata: { url: fixture.base } }]);
    fake.reply(
      { text: 'Thought: search\nAction: web_search\nAction Input: node sqlite' },
      { text: 'Thought: done\nFinal Answer: Use better-sqlite3.' },
    );
    const reply = await invoke(token, agent.id, 'Which SQLite library?');
    assert.equal(reply.status, 200);
    assert.equal(reply.body.data.output, 'Use better-sqlite3.');
    assert.deepEqual(reply.body.data.steps[0].input, { query: 'node sqlite' });
    assert.ok(fixture.seen.some((s) => s.path === '/search?q=node+sqlite&format=json'));
  });
});

describe('AGENT tools: nested runs', () => {
  it("the other agent runs as its own recorded run with parentRunId; its answer is the tool's result", async () => {
    const token = await newUser();
    const helper = await agentWithTools(token, 'VENDOR_A', [], 'Helper');
    const lead = await agentWithTools(token, 'VENDOR_A', [{ name: 'Ask helper', type: 'AGENT', metadata: { agentId: helper.id } }], 'Lead');
    const start = fake.requests.length;
    fake.reply(
      { toolCalls: [{ id: 'a1', name: 'ask_helper', arguments: '{"query":"What is 2+2?"}' }] },
      { text: 'It is 4.' },
      { text: 'Helper says 4.' },
    );
    const reply = await invoke(token, lead.id, 'Ask the helper');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.data.output, 'Helper says 4.');
    assert.equal(fake.requests[start + 1].body.messages.at(-1).content, 'What is 2+2?', 'the helper got the query as its input');
    assert.equal(fake.requests[start + 2].body.messages.at(-1).content, 'It is 4.');
    const runs = await service.request('GET', `/api/v1/agents/${helper.id}/runs`, { token });
    assert.equal(runs.body.data.length, 1);
    const child = runs.body.data[0];
    assert.equal(child.parentRunId, reply.body.data.runId);
    assert.equal(child.status, 'succeeded');
    assert.equal(child.input, 'What is 2+2?');
    assert.equal((await service.request('GET', `/api/v1/runs/${child.id}`, { token })).body.data.output, 'It is 4.');
  });

  it("a cycle comes back to the model as the tool's error", async () => {
    const token = await newUser();
    const a = await agentWithTools(token, 'VENDOR_A', [], 'Alpha');
    const b = await agentWithTools(token, 'VENDOR_A', [{ name: 'Ask alpha', type: 'AGENT', metadata: { agentId: a.id } }], 'Beta');
    const tool = await service.create(token, '/tools', { name: 'Ask beta', type: 'AGENT', metadata: { agentId: b.id } });
    await service.create(token, '/agent-tools', { agentId: a.id, toolId: tool.id });
    fake.reply(
      { toolCalls: [{ id: 'x1', name: 'ask_beta', arguments: '{"query":"q1"}' }] }, // Alpha asks Beta
      { toolCalls: [{ id: 'x2', name: 'ask_alpha', arguments: '{"query":"q2"}' }] }, // Beta asks Alpha: refused
      { text: 'Beta gives up.' },
      { text: 'Alpha is done.' },
    );
    const reply = await invoke(token, a.id, 'Start');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.data.output, 'Alpha is done.');
    const betaRuns = (await service.request('GET', `/api/v1/agents/${b.id}/runs`, { token })).body.data;
    assert.equal(betaRuns.length, 1);
    assert.match(betaRuns[0].steps[0].error, /already running|cycle|loop/i);
    const alphaRuns = (await service.request('GET', `/api/v1/agents/${a.id}/runs`, { token })).body.data;
    assert.equal(alphaRuns.length, 1, 'Alpha was not run a second time');
  });

  it("a fourth level of nesting is refused, as the tool's error of the third", async () => {
    const token = await newUser();
    const chain: Json[] = [await agentWithTools(token, 'VENDOR_A', [], 'Level 4')];
    for (const level of [3, 2, 1, 0]) {
      chain.unshift(
        await agentWithTools(
          token,
          'VENDOR_A',
          [{ name: 'Ask next', type: 'AGENT', metadata: { agentId: chain[0].id } }],
          `Level ${level}`,
        ),
      );
    }
    const ask = { toolCalls: [{ name: 'ask_next', arguments: '{"query":"deeper"}' }] };
    fake.reply(ask, ask, ask, ask, { text: 'L3 stops.' }, { text: 'L2 done.' }, { text: 'L1 done.' }, { text: 'L0 done.' });
    const reply = await invoke(token, chain[0].id, 'Go deep');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.data.output, 'L0 done.');
    const level3 = (await service.request('GET', `/api/v1/agents/${chain[3].id}/runs`, { token })).body.data;
    assert.match(level3[0].steps[0].error, /at most 3/);
    assert.equal((await service.request('GET', `/api/v1/agents/${chain[4].id}/runs`, { token })).body.data.length, 0);
  });

  it('a deleted agent: the tool is not offered and warnings say why', async () => {
    const token = await newUser();
    const gone = await agentWithTools(token, 'VENDOR_A', [], 'Gone');
    const lead = await agentWithTools(token, 'VENDOR_A', [{ name: 'Ask gone', type: 'AGENT', metadata: { agentId: gone.id } }]);
    assert.equal((await service.request('DELETE', `/api/v1/agents/${gone.id}`, { token })).status, 200);
    const start = fake.requests.length;
    fake.reply({ text: 'Alone.' });
    const reply = await invoke(token, lead.id, 'Hi');
    assert.equal(reply.body.data.output, 'Alone.');
    assert.equal(fake.requests[start].body.tools, undefined);
    assert.deepEqual(reply.body.data.warnings, [
      'tool "Ask gone" (AGENT) is not offered: the agent it calls (metadata.agentId) no longer exists',
    ]);
  });

  it("another user's agent cannot be named by an AGENT tool (422)", async () => {
    const token = await newUser();
    const other = await newUser();
    const theirs = await service.create(other, '/agents', {
      name: 'Theirs',
      type: 'VENDOR_A',
      llm: { provider: 'openai', model: 'm' },
      hasMemory: false,
    });
    const reply = await service.request('POST', '/api/v1/tools', {
      token,
      body: { name: 'steal', type: 'AGENT', metadata: { agentId: theirs.id } },
    });
    assert.equal(reply.status, 422);
    assert.equal(reply.body.error.details[0].path, 'metadata.agentId');
  });
});

describe('the address guard', () => {
  it("without ALLOW_PRIVATE_NETWORKS a tool on a private address is refused, as the tool's error", async () => {
    const guarded = await startService({
      allowPrivateNetworks: false,
      runs: {
        openaiBaseUrl: fake.url,
        openaiApiKey: 'k',
        ollamaBaseUrl: fake.url,
        timeoutMs: 10_000,
        concurrencyPerUser: 4,
        maxSteps: 4,
        backgroundTimeoutMs: 1_800_000,
        queuePerUser: 100,
        approvalTtlMs: 86_400_000,
        eventsRetentionDays: 30,
      },
    });
    const { token } = await guarded.signUp();
    const agent = await guarded.create(token, '/agents', {
      name: 'A',
      type: 'VENDOR_A',
      llm: { provider: 'openai', model: 'fake-model' },
      hasMemory: false,
    });
    const tool = await guarded.create(token, '/tools', { name: 'Local', type: 'HOSTED_MODEL', metadata: { url: `${fixture.base}/echo` } });
    await guarded.create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    const before = fixture.seen.length;
    fake.reply({ toolCalls: [{ id: 'g1', name: 'local', arguments: '{"input":"x"}' }] }, { text: 'Refused.' });
    const reply = await guarded.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input: 'go' } });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(
      reply.body.data.steps[0].error,
      'refused: 127.0.0.1 is a loopback address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
    );
    assert.equal(fixture.seen.length, before);
    assert.equal(
      lastRequest().body.messages.at(-1).content,
      'Error: refused: 127.0.0.1 is a loopback address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
    );
  });
});

describe('more failure paths', () => {
  it('a tool that does not answer in time: its error goes to the model and the run goes on', async () => {
    const slowServer = http.createServer(() => {}); // never answers
    await new Promise<void>((resolve) => slowServer.listen(0, '127.0.0.1', resolve));
    after(() => {
      slowServer.closeAllConnections();
      slowServer.close();
    });
    const slowUrl = `http://127.0.0.1:${(slowServer.address() as AddressInfo).port}/`;
    let provider: ToolProvider | undefined;
    const own = await startService(
      {
        runs: {
          openaiBaseUrl: fake.url,
          openaiApiKey: 'k',
          ollamaBaseUrl: fake.url,
          timeoutMs: 10_000,
          concurrencyPerUser: 4,
          maxSteps: 4,
          backgroundTimeoutMs: 1_800_000,
          queuePerUser: 100,
          approvalTtlMs: 86_400_000,
          eventsRetentionDays: 30,
        },
      },
      undefined,
      { toolProvider: (...args) => provider!(...args) },
    );
    // The app's own provider, with a short per-request timeout (the service's is 30 s).
    const sealer: Sealer = {
      seal: () => {
        throw new Error('not used');
      },
      open: own.unseal,
    };
    const tools = createToolStore(own.db, sealer);
    provider = createToolProvider({
      listToolsForRun: tools.listForRun,
      findAgent: () => undefined,
      fetch: createGuardedFetch({ allowPrivateNetworks: true }),
      toolTimeoutMs: 300,
    });
    const { token } = await own.signUp();
    const agent = await own.create(token, '/agents', {
      name: 'A',
      type: 'VENDOR_A',
      llm: { provider: 'openai', model: 'fake-model' },
      hasMemory: false,
    });
    const tool = await own.create(token, '/tools', { name: 'Slow', type: 'AUTOMATION_NLA', metadata: { url: slowUrl } });
    await own.create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    fake.reply({ toolCalls: [{ id: 't1', name: 'slow', arguments: '{"input":"x"}' }] }, { text: 'It timed out.' });
    const started = Date.now();
    const reply = await own.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input: 'go' } });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.match(reply.body.data.steps[0].error, /^127\.0\.0\.1:\d+ did not answer within 0\.3 s$/);
    assert.equal(reply.body.data.output, 'It timed out.');
    assert.ok(Date.now() - started < 5000);
  });

  it('a model that refuses tools fails the run with its reason, never a run without tools', async () => {
    const token = await newUser();
    const agent = await agentWithTools(token, 'VENDOR_A', [{ name: 'Web search', type: 'SEARCH', metadata: { url: fixture.base } }]);
    const start = fake.requests.length;
    fake.reply({ status: 400, message: 'registry.ollama.ai/library/gemma:2b does not support tools' });
    const reply = await invoke(token, agent.id, 'Search something');
    assert.equal(reply.status, 502);
    assert.equal(reply.body.error.code, 'upstream_error');
    assert.match(reply.body.error.message, /does not support tools/);
    assert.equal(fake.requests.length - start, 1, 'no second call without tools');
  });
});
