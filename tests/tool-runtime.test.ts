// The tool runtime on its own, against fixture servers on 127.0.0.1: function names, SEARCH,
// the plain HTTP tools, OPENAPI (spec by URL and inline, $refs, validation, the server pinned,
// the cap, the cache), AGENT (cycle, depth, a deleted agent), secrets kept out, and the ReAct
// text loop (parsing, arguments, the streamed final answer, the step limit).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ToolFunction, ToolCallContext } from '../src/lib/tool-contract.js';
import { createFunctionNamer, functionNameOf } from '../src/tools/runtime/naming.js';
import { buildToolSet, type ToolProviderDeps } from '../src/tools/runtime/provider.js';
import type { ToolRecord } from '../src/tools/kinds/kind.js';
import { clearOpenApiCache, MAX_OPERATIONS } from '../src/tools/runtime/openapi.js';
import { createGuardedFetch } from '../src/ingest/fetch.js';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { createFinalAnswerFilter, parseReactOutput, reactArguments, reactStrategy, type ReactRun } from '../src/runs/react.js';
import { startRecordingServer } from './fixtures/recording-server.js';

const SECRET = 'sk-tool-secret-4242';
const json = (res: http.ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

const PET_SPEC = `
openapi: 3.0.3
info: { title: Pets, version: "1" }
servers:
  - url: /api
paths:
  /pets/{petId}:
    parameters:
      - $ref: '#/components/parameters/PetId'
    get:
      operationId: getPet
      summary: Read one pet
      parameters:
        - name: verbose
          in: query
          schema: { type: boolean }
    delete:
      operationId: deletePet
      summary: Delete one pet
  /pets:
    post:
      operationId: createPet
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/NewPet' }
  /upload:
    post:
      operationId: upload
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema: { type: object }
  /remote:
    get:
      operationId: remote
      parameters:
        - $ref: 'other.yaml#/components/parameters/X'
components:
  parameters:
    PetId:
      name: petId
      in: path
      required: true
      schema: { type: string }
  schemas:
    NewPet:
      type: object
      required: [name]
      properties:
        name: { type: string, example: Rex }
        tag: { type: string, nullable: true }
        parent: { $ref: '#/components/schemas/NewPet' }
`;

let api: Awaited<ReturnType<typeof startRecordingServer>>;
let other: Awaited<ReturnType<typeof startRecordingServer>>;

before(async () => {
  other = await startRecordingServer((_req, res) => json(res, 200, { other: true }));
  api = await startRecordingServer((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/spec.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' });
      res.end(PET_SPEC);
    } else if (url.pathname === '/big-spec.json') {
      const paths: Record<string, unknown> = {};
      for (let i = 0; i < MAX_OPERATIONS + 3; i += 1) paths[`/op${i}`] = { get: { operationId: `op${i}` } };
      json(res, 200, { openapi: '3.1.0', info: { title: 'Big', version: '1' }, paths });
    } else if (url.pathname === '/swagger.json') {
      json(res, 200, { swagger: '2.0', paths: {} });
    } else if (url.pathname.startsWith('/api/pets/') && req.method === 'GET') {
      json(res, 200, { id: decodeURIComponent(url.pathname.slice('/api/pets/'.length)), verbose: url.searchParams.get('verbose') });
    } else if (url.pathname === '/api/pets' && req.method === 'POST') {
      json(res, 201, { created: JSON.parse(body) });
    } else if (url.pathname === '/search') {
      if (url.searchParams.get('format') !== 'json') return json(res, 403, { error: 'format' });
      const results = Array.from({ length: 8 }, (_, i) => ({ title: `T${i}`, url: `https://e.test/${i}`, content: `C${i}`, engine: 'x' }));
      json(res, 200, { query: url.searchParams.get('q'), results });
    } else if (url.pathname === '/forbidden-search/search') {
      json(res, 403, { error: 'Forbidden' });
    } else if (url.pathname === '/echo-json') {
      // The header as JSON writers put it in a string: JavaScript's, then PHP's (which escapes `/` too).
      const written = JSON.stringify({ auth: req.headers['x-api-key'] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${written} ${written.replaceAll('/', '\\/')}`);
    } else if (url.pathname === '/echo') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`you said ${JSON.parse(body).input}; auth was ${req.headers['x-api-key']}`);
    } else if (url.pathname === '/fail') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom');
    } else if (url.pathname === '/huge') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(200 * 1024));
    } else if (url.pathname === '/slow') {
      setTimeout(() => {
        if (!res.destroyed) res.end('late');
      }, 3000);
    } else if (url.pathname === '/redirect') {
      res.writeHead(302, { location: `${other.base}/` });
      res.end();
    } else {
      json(res, 404, { error: 'not found' });
    }
  });
});

after(() => {
  for (const s of [api, other]) {
    s.server.closeAllConnections();
    s.server.close();
  }
});

beforeEach(() => clearOpenApiCache());

const children: { parent: ToolCallContext; agentId: string; input: string }[] = [];

/** A call's context; its `runChild` answers as the run engine would, and records what it was asked. */
function context(overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  const parent: ToolCallContext = {
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    runId: 'run-1',
    userId: 'user-1',
    depth: 0,
    runChild: async (agentId, input) => {
      children.push({ parent, agentId, input });
      if (input === 'fail') throw new Error('The agent "AGENT-A" failed: boom');
      return `answer from ${agentId} to ${input}`;
    },
    ...overrides,
  };
  return parent;
}

const deps: ToolProviderDeps = {
  fetch: (input, init) => fetch(input, init),
  findAgent: (userId, agentId) =>
    userId === 'user-1' && ['agent-a', 'agent-b'].includes(agentId) ? { id: agentId, name: agentId.toUpperCase() } : undefined,
};

function tool(type: string, metadata: Record<string, unknown>, name = `My ${type} tool`, description: string | null = null): ToolRecord {
  return { id: `tool-${name}`, name, type, description, metadata };
}

async function toolSet(...records: ToolRecord[]) {
  return buildToolSet(deps, {
    userId: 'user-1',
    tools: records,
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
  });
}

function only(set: { tools: ToolFunction[] }, name?: string): ToolFunction {
  const found = name ? set.tools.find((t) => t.name === name) : set.tools[0];
  assert.ok(found, `no function ${name ?? ''} in ${set.tools.map((t) => t.name).join(', ')}`);
  return found;
}

describe('function names', () => {
  it('lowercases to [a-z0-9_], numbers repeats and stays within 64 characters', () => {
    assert.equal(functionNameOf('Web Search (Café)!'), 'web_search_cafe');
    assert.equal(functionNameOf('***'), 'tool');
    const take = createFunctionNamer();
    assert.deepEqual([take('News'), take('news'), take('NEWS')], ['news', 'news_2', 'news_3']);
    const long = 'a'.repeat(80);
    const first = take(long);
    const second = take(long);
    assert.equal(first.length, 64);
    assert.ok(second.length <= 64 && second.endsWith('_2') && second !== first);
  });

  it('names OPENAPI functions <tool>_<operationId> by the same rule (lowercased, `_` for the rest) and repeats of a tool name apart', async () => {
    const set = await toolSet(
      tool('OPENAPI', { url: `${api.base}/spec.yaml` }, 'Pet Store'),
      tool('SEARCH', { url: api.base }, 'Lookup'),
      tool('SEARCH', { url: api.base }, 'lookup'),
    );
    assert.deepEqual(
      set.tools.map((t) => t.name),
      ['pet_store_getpet', 'pet_store_deletepet', 'pet_store_createpet', 'lookup', 'lookup_2'],
    );
    for (const { name } of set.tools) assert.match(name, /^[a-z0-9_]{1,64}$/, 'what every model API accepts');
  });
});

describe('SEARCH', () => {
  it('asks {url}/search?q=…&format=json and returns the top 5 (title, url, content)', async () => {
    const set = await toolSet(tool('SEARCH', { url: `${api.base}/` }));
    const search = only(set);
    assert.deepEqual(search.parameters.required, ['query']);
    const before = api.seen.length;
    const out = JSON.parse(await search.call({ query: 'koa sqlite' }, context()));
    assert.equal(api.seen[before].path, '/search?q=koa+sqlite&format=json');
    assert.equal(out.length, 5);
    assert.deepEqual(out[0], { title: 'T0', url: 'https://e.test/0', content: 'C0' });
  });

  it('explains a 403 (JSON format off) and refuses a missing query', async () => {
    const search = only(await toolSet(tool('SEARCH', { url: `${api.base}/forbidden-search` })));
    await assert.rejects(search.call({ query: 'x' }, context()), /HTTP 403.*search\.formats/);
    await assert.rejects(search.call({}, context()), /invalid arguments: expected \{"query"/);
  });
});

describe('plain HTTP tools', () => {
  it('POSTs {"input"} with the metadata headers and returns the text; the secret is redacted from what comes back', async () => {
    for (const type of ['ENGINE_ALPHA', 'HOSTED_MODEL', 'AUTOMATION_NLA']) {
      const fn = only(await toolSet(tool(type, { url: `${api.base}/echo`, headers: { 'X-Api-Key': SECRET } })));
      assert.deepEqual(fn.parameters.required, ['input']);
      const before = api.seen.length;
      const out = await fn.call({ input: 'hello' }, context());
      const request = api.seen[before];
      assert.equal(request.method, 'POST');
      assert.deepEqual(JSON.parse(request.body), { input: 'hello' });
      assert.equal(request.headers['x-api-key'], SECRET);
      assert.equal(out, 'you said hello; auth was [redacted]');
    }
  });

  it('a secret echoed inside a JSON string (its quote, backslash and slash escaped) is redacted too', async () => {
    const secret = 'sk/4242"quoted\\back';
    const fn = only(await toolSet(tool('HOSTED_MODEL', { url: `${api.base}/echo-json`, headers: { 'X-Api-Key': secret } })));
    assert.equal(await fn.call({ input: 'x' }, context()), '{"auth":"[redacted]"} {"auth":"[redacted]"}');
  });

  it('turns an HTTP error, a timeout, a refused connection and a redirect into tool errors', async () => {
    const failing = only(await toolSet(tool('ENGINE_ALPHA', { url: `${api.base}/fail` })));
    await assert.rejects(failing.call({ input: 'x' }, context()), /127\.0\.0\.1:\d+ answered HTTP 500: boom/);
    const slow = only(await toolSet(tool('ENGINE_ALPHA', { url: `${api.base}/slow` })));
    const started = Date.now();
    await assert.rejects(slow.call({ input: 'x' }, context({ deadline: Date.now() + 300 })), /did not answer within 0\.3 s/);
    assert.ok(Date.now() - started < 2000);
    const gone = await startRecordingServer(() => {});
    gone.server.close();
    const closed = only(await toolSet(tool('ENGINE_ALPHA', { url: gone.base })));
    await assert.rejects(closed.call({ input: 'x' }, context()), /could not connect to 127\.0\.0\.1:\d+: connection refused/);
    const redirect = only(await toolSet(tool('ENGINE_ALPHA', { url: `${api.base}/redirect` })));
    await assert.rejects(redirect.call({ input: 'x' }, context()), /HTTP 302/);
    assert.equal(other.seen.length, 0);
  });

  it('caps the answer at 64 KiB', async () => {
    const fn = only(await toolSet(tool('HOSTED_MODEL', { url: `${api.base}/huge` })));
    const out = await fn.call({ input: 'x' }, context());
    assert.ok(out.startsWith('x'.repeat(64 * 1024)));
    assert.match(out, /\[the answer was cut at 64 KiB\]$/);
    assert.ok(out.length < 64 * 1024 + 100);
  });
});

describe('tools that cannot be offered', () => {
  it('leaves them out and says why, without echoing header values', async () => {
    const set = await toolSet(
      tool('SEARCH', {}, 'no url'),
      tool('ENGINE_ALPHA', { url: 'ftp://example.com/' }, 'ftp'),
      tool('HOSTED_MODEL', { url: `${api.base}/echo`, headers: { 'Bad Name': SECRET } }, 'bad header'),
      tool('AGENT', {}, 'no agent id'),
      tool('AGENT', { agentId: 'deleted-agent' }, 'gone'),
      tool('OPENAPI', { url: `${api.base}/swagger.json` }, 'swagger'),
      tool('OPENAPI', { spec: PET_SPEC }, 'relative inline'),
      tool('OPENAPI', { url: `${api.base}/nothing-here` }, 'missing spec'),
    );
    assert.equal(set.tools.length, 0);
    const text = set.warnings.join('\n');
    assert.match(text, /tool "no url" \(SEARCH\) is not offered: metadata\.url is missing/);
    assert.match(text, /tool "ftp" \(ENGINE_ALPHA\) is not offered: metadata\.url must be an http or https URL/);
    assert.match(text, /tool "bad header" .*invalid header name/);
    assert.match(text, /tool "no agent id" \(AGENT\) is not offered: metadata\.agentId is missing/);
    assert.match(text, /tool "gone" \(AGENT\) is not offered: the agent it calls .* no longer exists/);
    assert.match(text, /tool "swagger" .*Swagger 2\.0; only OpenAPI 3\.x/);
    assert.match(text, /tool "relative inline" .*needs an absolute URL in "servers"/);
    assert.match(text, /tool "missing spec" .*could not be fetched: .*HTTP 404/);
    assert.ok(!text.includes(SECRET));
  });
});

describe('OPENAPI', () => {
  it('offers the supported operations of a YAML spec fetched by URL, with $refs resolved, and warns about the rest', async () => {
    const set = await toolSet(tool('OPENAPI', { url: `${api.base}/spec.yaml`, headers: { Authorization: `Bearer ${SECRET}` } }, 'pets'));
    assert.deepEqual(
      set.tools.map((t) => t.name),
      ['pets_getpet', 'pets_deletepet', 'pets_createpet'],
    );
    assert.match(set.warnings.join('\n'), /operation upload was skipped: its request body is not JSON \(multipart\/form-data\)/);
    assert.match(set.warnings.join('\n'), /operation remote was skipped: it uses the external reference "other\.yaml/);
    const create = only(set, 'pets_createpet');
    const body = (create.parameters.properties as Record<string, any>).body;
    assert.deepEqual(body.required, ['name']);
    assert.deepEqual(body.properties.tag.type, ['string', 'null']);
    assert.equal(body.properties.name.example, undefined);
    assert.equal(typeof body.properties.parent.description, 'string'); // the recursive $ref became "any"
    assert.equal(only(set, 'pets_getpet').description, 'Read one pet');
  });

  it("calls the spec's server (resolved against the spec URL) with the parameters, body and headers", async () => {
    const set = await toolSet(tool('OPENAPI', { url: `${api.base}/spec.yaml`, headers: { Authorization: `Bearer ${SECRET}` } }, 'pets'));
    let before = api.seen.length;
    const read = await only(set, 'pets_getpet').call({ petId: 'a b/c', verbose: true }, context());
    assert.equal(api.seen[before].path, '/api/pets/a%20b%2Fc?verbose=true');
    assert.equal(api.seen[before].headers.authorization, `Bearer ${SECRET}`);
    assert.deepEqual(JSON.parse(read), { id: 'a b/c', verbose: 'true' });
    before = api.seen.length;
    const created = await only(set, 'pets_createpet').call({ body: { name: 'Rex', tag: null } }, context());
    assert.equal(api.seen[before].method, 'POST');
    assert.equal(api.seen[before].headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(created), { created: { name: 'Rex', tag: null } });
  });

  it('validates the arguments before any request and keeps path values inside the API', async () => {
    const set = await toolSet(tool('OPENAPI', { url: `${api.base}/spec.yaml` }, 'pets'));
    const before = api.seen.length;
    await assert.rejects(
      only(set, 'pets_createpet').call({ body: { tag: 'x' } }, context()),
      /invalid arguments: \/body must have required property 'name'/,
    );
    await assert.rejects(
      only(set, 'pets_getpet').call({ petId: 'x', host: 'evil.test' }, context()),
      /invalid arguments: .*additional properties \("host"\)/,
    );
    await assert.rejects(only(set, 'pets_getpet').call({ petId: 42 }, context()), /\/petId must be string/);
    await assert.rejects(only(set, 'pets_getpet').call({ petId: '..' }, context()), /"petId" cannot be "\.\."/);
    assert.equal(api.seen.length, before, 'no request was sent');
  });

  it('takes an inline JSON spec whose servers hold an absolute URL', async () => {
    const spec = JSON.stringify({
      openapi: '3.0.0',
      info: { title: 'x', version: '1' },
      servers: [{ url: `${api.base}/api` }],
      paths: {
        '/pets/{id}': {
          get: { operationId: 'read', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }] },
        },
      },
    });
    const set = await toolSet(tool('OPENAPI', { spec }, 'inline'));
    assert.equal(JSON.parse(await only(set, 'inline_read').call({ id: '7' }, context())).id, '7');
  });

  it('offers at most 32 operations and says how many were left out', async () => {
    const set = await toolSet(tool('OPENAPI', { url: `${api.base}/big-spec.json` }, 'big'));
    assert.equal(set.tools.length, MAX_OPERATIONS);
    assert.match(set.warnings.join('\n'), /3 operation\(s\) beyond the first 32 were not offered/);
  });

  it('fetches the spec once per tool for a few minutes', async () => {
    const specFetches = () => api.seen.filter((s) => s.path === '/spec.yaml').length;
    const before = specFetches();
    await toolSet(tool('OPENAPI', { url: `${api.base}/spec.yaml` }, 'pets'));
    await toolSet(tool('OPENAPI', { url: `${api.base}/spec.yaml` }, 'pets'));
    assert.equal(specFetches(), before + 1);
  });
});

describe('AGENT', () => {
  it("hands { query } to the run engine as a child of the calling run; its failure is the tool's error", async () => {
    const set = await toolSet(tool('AGENT', { agentId: 'agent-a' }, 'Ask A'));
    const fn = only(set);
    assert.equal(fn.name, 'ask_a');
    assert.match(fn.description, /"AGENT-A"/);
    assert.deepEqual(fn.parameters.required, ['query']);
    children.length = 0;
    const parent = context({ runId: 'run-9', depth: 1 });
    assert.equal(await fn.call({ query: 'hi' }, parent), 'answer from agent-a to hi');
    assert.deepEqual(children, [{ parent, agentId: 'agent-a', input: 'hi' }]);
    await assert.rejects(fn.call({ query: 'fail' }, parent), /^ToolError: The agent "AGENT-A" failed: boom$/);
    await assert.rejects(fn.call({ question: 'x' }, parent), /invalid arguments/);
    assert.equal(children.length, 2);
  });
});

describe('ReAct', () => {
  const echo: ToolFunction = {
    name: 'echo',
    description: 'Echoes.',
    toolId: 't1',
    toolName: 'Echo',
    parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
    call: async (args) => `echo:${(args as { input: string }).input}`,
  };
  const failing: ToolFunction = {
    ...echo,
    name: 'broken',
    toolName: 'Broken',
    call: async () => {
      throw new Error('it broke');
    },
  };

  it("parses actions and final answers, cutting the model's own Observation", () => {
    assert.deepEqual(
      parseReactOutput('Thought: look\nAction: echo\nAction Input: {"input": "a"}\nObservation: made up\nFinal Answer: no'),
      {
        kind: 'action',
        action: 'echo',
        actionInput: '{"input": "a"}',
        text: 'Thought: look\nAction: echo\nAction Input: {"input": "a"}',
      },
    );
    assert.equal((parseReactOutput('Thought: done\nFinal Answer: 42 is it') as { answer: string }).answer, '42 is it');
    assert.equal(parseReactOutput('just talking').kind, 'invalid');
    assert.deepEqual(reactArguments(echo, 'plain words'), { input: 'plain words' });
    assert.deepEqual(reactArguments(echo, '"quoted"'), { input: 'quoted' });
    assert.deepEqual(reactArguments(echo, '```json\n{"input": "x"}\n```'), { input: 'x' });
  });

  it('streams only the final answer, holding back a possible Observation', () => {
    const out: string[] = [];
    const filter = createFinalAnswerFilter((t) => out.push(t));
    for (const piece of ['Thought: ok\nFinal', ' Answer:', ' Hello', ' world', '\nObser', 'vation: junk']) filter.push(piece);
    filter.end();
    assert.equal(out.join(''), 'Hello world');
    const none: string[] = [];
    const action = createFinalAnswerFilter((t) => none.push(t));
    for (const piece of ['Thought: x\nAction: echo\nAction Input: hi', '\nFinal Answer: fake']) action.push(piece);
    action.end();
    assert.deepEqual(none, []);
  });

  /** A run as the engine gives the strategy: scripted model replies, tool calls recorded. */
  function fakeRun(script: string[], tools: ToolFunction[], streaming: boolean) {
    const sent: ChatCompletionMessageParam[][] = [];
    const stops: (string[] | undefined)[] = [];
    const tokens: string[] = [];
    const calls: { id: string; name: string; arguments: string }[] = [];
    const run: ReactRun = {
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Question?' },
      ],
      tools,
      streaming,
      async chat(request) {
        if (sent.length >= 6) throw new Error('step limit');
        sent.push(request.messages.map((m) => ({ ...m })) as ChatCompletionMessageParam[]);
        stops.push(request.stop);
        const text = script[sent.length - 1] ?? 'Thought: hmm\nAction: echo\nAction Input: again';
        if (streaming) for (const ch of text) request.onText?.(ch);
        return { content: text };
      },
      async callTools(batch) {
        const results = [];
        for (const call of batch) {
          calls.push(call);
          const found = tools.find((t) => t.name === call.name)!;
          try {
            results.push({ output: await found.call(JSON.parse(call.arguments), context()) });
          } catch (error) {
            results.push({ error: (error as Error).message });
          }
        }
        return results;
      },
      emitToken: (text) => tokens.push(text),
    };
    return { run, sent, stops, tokens, calls };
  }
  const content = (message: ChatCompletionMessageParam | undefined) => String(message?.content);

  it('runs tools, feeds observations (errors included) and returns the final answer, streaming only it', async () => {
    const fake = fakeRun(
      [
        'Thought: try\nAction: echo\nAction Input: hi there\nObservation: invented\nFinal Answer: invented too',
        'Thought: again\nAction: broken\nAction Input: {"input": "x"}',
        'Thought: odd\nAction: nosuch\nAction Input: {}',
        'Thought: I now know\nFinal Answer: all done',
      ],
      [echo, failing],
      true,
    );
    assert.equal(await reactStrategy(fake.run), 'all done');
    assert.equal(fake.tokens.join(''), 'all done');
    assert.deepEqual(fake.stops[0], ['\nObservation:']);
    assert.match(
      content(fake.sent[0][0]),
      /^You are helpful\.\n\nAnswer the following questions.*\necho: Echoes\..*Action: the action to take, should be one of \[echo, broken\]/s,
    );
    assert.equal(content(fake.sent[1].at(-2)), 'Thought: try\nAction: echo\nAction Input: hi there', "the model's own Observation was cut");
    assert.equal(content(fake.sent[1].at(-1)), 'Observation: echo:hi there\nThought:');
    assert.equal(content(fake.sent[2].at(-1)), 'Observation: Error: it broke\nThought:');
    assert.match(content(fake.sent[3].at(-1)), /nosuch is not a valid tool, try one of \[echo, broken\]/);
    assert.deepEqual(fake.calls, [
      { id: 'react_1', name: 'echo', arguments: '{"input":"hi there"}' },
      { id: 'react_2', name: 'broken', arguments: '{"input":"x"}' },
    ]);
  });

  it('takes the text of a model that twice ignores the format as its answer; with no tools makes one plain call', async () => {
    const fake = fakeRun(['I think it is 4.', 'It is 4.'], [echo], false);
    assert.equal(await reactStrategy(fake.run), 'It is 4.');
    assert.match(content(fake.sent[1].at(-1)), /Invalid format/);
    const plain = fakeRun(['Just an answer'], [], false);
    assert.equal(await reactStrategy(plain.run), 'Just an answer');
    assert.equal(plain.stops[0], undefined);
    assert.equal(content(plain.sent[0][0]), 'You are helpful.');
  });

  it("keeps going until the run's step limit stops it", async () => {
    const fake = fakeRun([], [echo], false);
    await assert.rejects(reactStrategy(fake.run), /step limit/);
    assert.equal(fake.calls.length, 6);
  });
});

describe('names of tools left out', () => {
  it('are not taken: the next tool of the same name keeps the plain name', async () => {
    const set = await toolSet(tool('SEARCH', {}, 'Finder'), tool('SEARCH', { url: api.base }, 'Finder'));
    assert.deepEqual(
      set.tools.map((t) => t.name),
      ['finder'],
    );
  });
});

describe("through the service's guarded fetch", () => {
  const guardedDeps = (allowPrivateNetworks: boolean): ToolProviderDeps => ({
    ...deps,
    fetch: createGuardedFetch({ allowPrivateNetworks }),
  });
  const build = (allow: boolean, ...records: ToolRecord[]) =>
    buildToolSet(guardedDeps(allow), {
      userId: 'user-1',
      tools: records,
      signal: new AbortController().signal,
      deadline: Date.now() + 10_000,
    });

  it("refuses a loopback address (as the tool's error, or the spec's warning) unless private networks are allowed", async () => {
    const refused = await build(
      false,
      tool('HOSTED_MODEL', { url: `${api.base}/echo`, headers: { 'X-Api-Key': SECRET } }),
      tool('OPENAPI', { url: `${api.base}/spec.yaml` }, 'pets'),
    );
    const before = api.seen.length;
    await assert.rejects(
      only(refused).call({ input: 'x' }, context()),
      /^ToolError: refused: 127\.0\.0\.1 is a loopback address \(the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on\)$/,
    );
    assert.match(
      refused.warnings.join('\n'),
      /tool "pets" \(OPENAPI\) is not offered: its spec could not be fetched: refused: 127\.0\.0\.1 is a loopback address/,
    );
    assert.equal(api.seen.length, before, 'nothing reached the server');

    const allowed = await build(
      true,
      tool('HOSTED_MODEL', { url: `${api.base}/echo`, headers: { 'X-Api-Key': SECRET } }),
      tool('OPENAPI', { url: `${api.base}/spec.yaml` }, 'pets'),
    );
    assert.equal(await only(allowed).call({ input: 'x' }, context()), 'you said x; auth was [redacted]');
    assert.equal(JSON.parse(await only(allowed, 'pets_getpet').call({ petId: '1' }, context())).id, '1');
    const capped = await only(await build(true, tool('HOSTED_MODEL', { url: `${api.base}/huge` }))).call({ input: 'x' }, context());
    assert.match(capped, /cut at 64 KiB\]$/);
  });
});
