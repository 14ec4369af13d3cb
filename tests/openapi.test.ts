// The OpenAPI document: valid OpenAPI 3.1, served without auth, in step with the router (every
// served route documented, nothing else), and truthful: every operation is called for real and its
// answer is parsed with the documented shape, and the documented errors are ones the service gives.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import * as v from 'valibot';
import { buildOpenApiDocument, caseInsensitivePattern, openApiPath } from '../src/openapi/document.js';
import { ERRORS } from '../src/http/errors.js';
import { fullPath, type Route } from '../src/http/route.js';
import { ErrorEnvelopeSchema, successEnvelope } from '../src/http/shapes.js';
import { startService, type Reply, type RequestOptions, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

type Json = any;

/** The routes the app mounts: the document is built from exactly these. */
const ROUTES: Route[] = (await startService()).app.routes;
const document: Json = buildOpenApiDocument(ROUTES);

function operation(operationId: string): Route {
  const found = ROUTES.find((candidate) => candidate.operationId === operationId);
  if (!found) throw new Error(`no operation ${operationId}`);
  return found;
}

/** The schema a route's success answer parses with. */
function successSchema(route: Route): v.GenericSchema {
  const { success } = route;
  if ('raw' in success) return success.raw;
  if ('page' in success) return successEnvelope(v.array(success.page));
  if ('data' in success) return successEnvelope(success.data);
  if ('json' in success && success.json) return successEnvelope(success.json);
  throw new Error(`${route.operationId} answers a stream`);
}

/** Every `$ref` in `value`, with where it was found. */
function refsIn(value: Json, at = '#'): { ref: string; at: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsIn(item, `${at}/${index}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key === '$ref' && typeof item === 'string' ? [{ ref: item, at }] : refsIn(item, `${at}/${key}`),
  );
}

function resolvePointer(root: Json, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<Json>((node, part) => (node === undefined ? undefined : node[part]), root);
}

test('the document is valid OpenAPI 3.1 and every $ref resolves', async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, '3.1');
  for (const { ref, at } of refsIn(document)) {
    assert.ok(ref.startsWith('#/'), `${at}: only local references (${ref})`);
    assert.notEqual(resolvePointer(document, ref), undefined, `${at}: ${ref} does not resolve`);
  }
  // The validator's own dereferencing agrees.
  assert.doesNotThrow(() => validator.resolveRefs());
});

test('GET /api/v1/openapi.json answers the document without a token', async () => {
  const service = await startService();
  const reply = await service.request('GET', '/api/v1/openapi.json');
  assert.equal(reply.status, 200);
  assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(reply.body, JSON.parse(JSON.stringify(document)));
  assert.equal(reply.body.openapi, '3.1.1');
});

test('the document has one operation per route (a route with `when` shares its path with the next)', () => {
  const documented = new Set<string>();
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
  }
  const served = new Set(ROUTES.map((route) => `${route.method.toUpperCase()} ${fullPath(route)}`));
  assert.ok(served.size > 40, `only ${served.size} routes`);
  assert.deepEqual([...documented].sort(), [...served].sort());
  assert.equal(ROUTES.filter((route) => !route.when).length, served.size, 'two routes without `when` share a method and path');
  assert.equal(new Set(ROUTES.map((route) => route.operationId)).size, ROUTES.length, 'operation ids are unique');
  // The link form of POST /agents is documented as part of agent creation.
  const createAgent = document.paths['/api/v1/agents'].post;
  assert.equal(createAgent.operationId, 'createAgent');
  assert.match(createAgent.description, /agentId/);
});

test('the document describes parameters, bodies, security and the error envelope', () => {
  const agents = document.paths['/api/v1/agents'];
  assert.deepEqual(
    agents.get.parameters.map((parameter: Json) => [parameter.name, parameter.in, parameter.required]),
    [
      ['limit', 'query', false],
      ['after', 'query', false],
    ],
  );
  assert.ok(agents.get.responses['200'].headers.Link, 'lists document the Link header');
  const links = document.paths['/api/v1/agent-tools'].get.parameters.map((parameter: Json) => parameter.name);
  assert.deepEqual(links, ['limit', 'after', 'agentId', 'toolId', 'expand']);
  const expand = document.paths['/api/v1/agent-documents'].get.parameters.find((parameter: Json) => parameter.name === 'expand');
  assert.match(expand.description, /changes nothing/);
  const searchLimit = document.paths['/api/v1/documents/search'].get.parameters.find((parameter: Json) => parameter.name === 'limit');
  assert.match(searchLimit.description, /1 to 100 \(default 20\)/);
  assert.deepEqual(
    document.paths['/api/v1/agent-documents/{id}'].get.parameters.map((parameter: Json) => [
      parameter.name,
      parameter.in,
      parameter.required,
    ]),
    [['id', 'path', true]],
  );

  // Request bodies are the handlers' schemas in their input shape: required fields, enums, defaults.
  const createAgent = document.components.schemas.CreateAgentBody;
  assert.deepEqual(createAgent.anyOf[0].required, ['name', 'type', 'llm']);
  assert.deepEqual(createAgent.anyOf[0].properties.type.enum, ['VENDOR_A', 'REACT']);
  assert.equal(createAgent.anyOf[0].properties.hasMemory.default, false);
  assert.deepEqual(createAgent.anyOf[1], { $ref: '#/components/schemas/CreateAgentDocumentBody' });
  const createDocument = document.components.schemas.CreateDocumentBody;
  assert.deepEqual(createDocument.properties.to_page.anyOf[0], { anyOf: [{ type: 'number' }, { type: 'string' }] });
  assert.deepEqual(createDocument.properties.metadata.type, 'object');
  assert.equal(document.components.schemas.CreateTagBody.properties.color.pattern, '^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$');
  assert.equal(document.paths['/api/v1/api-tokens'].post.requestBody.required, false, 'an API token needs no body');
  assert.equal(document.paths['/api/v1/tools'].post.requestBody.required, true);

  // Answers: the envelope around the presented resource.
  const getTool = document.paths['/api/v1/tools/{id}'].get.responses['200'].content['application/json'].schema;
  assert.deepEqual(getTool.properties.success, { const: true });
  assert.deepEqual(getTool.properties.data, { $ref: '#/components/schemas/Tool' });
  assert.equal(document.paths['/api/v1/tools'].post.responses['201'].description, 'The new tool.');

  // Security: both header spellings; public operations say so.
  const schemes = document.components.securitySchemes;
  assert.deepEqual(schemes.bearerAuth, { type: 'http', scheme: 'bearer', description: schemes.bearerAuth.description });
  assert.equal(schemes.autorizationHeader.type, 'apiKey');
  assert.equal(schemes.autorizationHeader.in, 'header');
  assert.equal(schemes.autorizationHeader.name, 'Autorization');
  assert.deepEqual(agents.get.security, [{ bearerAuth: [] }, { autorizationHeader: [] }]);
  for (const path of ['/api/v1/auth/sign-up', '/api/v1/auth/sign-in']) assert.deepEqual(document.paths[path].post.security, []);
  assert.deepEqual(document.paths['/api/v1/auth/options'].get.security, []);
  assert.deepEqual(document.paths['/healthz'].get.security, []);
  assert.deepEqual(document.paths['/api/v1/openapi.json'].get.security, []);

  // Errors: every code, by status.
  assert.deepEqual(
    document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum,
    ERRORS.map((error) => error.code),
  );
  assert.deepEqual(agents.get.responses['401'], { $ref: '#/components/responses/Unauthorized' });
  assert.match(document.components.responses.ValidationFailed.description, /validation_failed/);
  assert.equal(document.paths['/api/v1/tags'].post.responses['409'].$ref, '#/components/responses/Conflict');
});

test('case-insensitive patterns are spelled out for JSON Schema', () => {
  assert.equal(caseInsensitivePattern('^#(?:[0-9a-f]{3})$'), '^#(?:[0-9a-fA-F]{3})$');
  assert.equal(caseInsensitivePattern('^ab\\d[^x]$'), '^[aA][bB]\\d[^xX]$');
  const pattern = new RegExp(caseInsensitivePattern('^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$'));
  for (const color of ['#ABC', '#abcd', '#0E8a16', '#0e8a16ff']) assert.ok(pattern.test(color), color);
  assert.ok(!pattern.test('#ggg'));
});

/** Calls an operation by id, with its method and path from the table. */
async function call(
  service: TestService,
  operationId: string,
  options: RequestOptions & { id?: string; sessionId?: string; query?: string } = {},
): Promise<Reply> {
  const op = operation(operationId);
  const path =
    fullPath(op)
      .replace(':id', options.id ?? '')
      .replace(':sessionId', options.sessionId ?? 'some-session') + (options.query ?? '');
  return service.request(op.method.toUpperCase(), path, options);
}

test('every operation answers its documented status and shape', async () => {
  const service = await startService();
  const covered = new Set<string>();
  /** Calls the operation and parses its answer with the documented success schema (strictly). */
  async function expectDocumented(operationId: string, options: Parameters<typeof call>[2] = {}): Promise<Json> {
    const op = operation(operationId);
    const reply = await call(service, operationId, options);
    assert.equal(reply.status, op.success.status, `${operationId}: ${JSON.stringify(reply.body)}`);
    const schema = successSchema(op);
    const parsed = v.safeParse(schema, reply.body);
    assert.ok(
      parsed.success,
      `${operationId} answered a shape the document does not describe: ${JSON.stringify(parsed.issues?.map((issue) => [v.getDotPath(issue), issue.message]))}\n${JSON.stringify(reply.body, null, 1)}`,
    );
    assert.ok(reply.headers.get('x-request-id'));
    covered.add(operationId);
    return 'raw' in op.success ? reply.body : reply.body.data;
  }

  const password = 'correct horse battery';
  const email = `openapi.${Date.now()}@example.com`;
  assert.deepEqual(await expectDocumented('getAuthOptions'), { signUp: true });
  await expectDocumented('signUp', { body: { name: 'Ada', email, password } });
  const { token } = await expectDocumented('signIn', { body: { email, password } });
  const auth = { token };
  await expectDocumented('getMe', auth);
  await expectDocumented('updateMe', { ...auth, body: { name: 'Ada L.' } });

  const apiToken = await expectDocumented('createApiToken', { ...auth, body: { description: 'ci', expiresAt: '2099-01-01T00:00:00Z' } });
  await expectDocumented('listApiTokens', auth);
  await expectDocumented('getApiToken', { ...auth, id: apiToken.id });
  await expectDocumented('updateApiToken', { ...auth, id: apiToken.id, body: { description: 'ci, renamed' } });

  const tool = await expectDocumented('createTool', { ...auth, body: { name: 'search', type: 'SEARCH', metadata: { key: 'secret' } } });
  await expectDocumented('listTools', auth);
  const offered = await expectDocumented('listToolFunctions', { ...auth, id: tool.id });
  assert.deepEqual(
    [offered.functions.length, offered.warnings.length],
    [0, 1],
    'a SEARCH tool without its url offers nothing, and says why',
  );
  await expectDocumented('getTool', { ...auth, id: tool.id });
  await expectDocumented('updateTool', { ...auth, id: tool.id, body: { type: 'AGENT' } });

  const documentBody = {
    name: 'handbook',
    type: 'PDF',
    url: 'https://example.com/h.pdf',
    from_page: 2,
    to_page: '9',
    splitter: { type: 'CharacterTextSplitter' },
  };
  const doc = await expectDocumented('createDocument', { ...auth, body: documentBody });
  await expectDocumented('createDocument', { ...auth, body: { name: 'plain', type: 'TXT', url: 'https://example.com/a.txt' } });
  // An upload (multipart/form-data), and its file: bytes, checked by hand.
  const boundary = 'openapi-boundary';
  const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\nOtters hold hands.\r\n--${boundary}--\r\n`;
  const uploaded = await expectDocumented('uploadDocument', {
    ...auth,
    raw: multipart,
    contentType: `multipart/form-data; boundary=${boundary}`,
  });
  const file = await service.request('GET', `/api/v1/documents/${uploaded.id}/file`, auth);
  assert.deepEqual([file.status, file.text, file.headers.get('content-type')], [200, 'Otters hold hands.', 'text/plain']);
  covered.add('getDocumentFile');
  // The document says POST /documents takes either body.
  const { body: openapi } = await service.request('GET', '/api/v1/openapi.json');
  const createBody = openapi.paths['/api/v1/documents'].post.requestBody.content;
  assert.deepEqual(Object.keys(createBody).sort(), ['application/json', 'multipart/form-data']);
  assert.equal(createBody['multipart/form-data'].schema.properties.file.type, 'string');
  assert.ok(createBody['multipart/form-data'].schema.required.includes('file'));
  await expectDocumented('listDocuments', auth);
  await expectDocumented('getDocument', { ...auth, id: doc.id });
  await expectDocumented('updateDocument', { ...auth, id: doc.id, body: { to_page: null, splitter: null } });
  await expectDocumented('ingestDocument', { ...auth, id: doc.id });
  await expectDocumented('listDocumentChunks', { ...auth, id: doc.id, query: '?limit=5' });
  await expectDocumented('searchDocuments', { ...auth, query: `?q=handbook&documentId=${doc.id}&limit=5` });

  const prompt = await expectDocumented('createPrompt', {
    ...auth,
    body: { name: 'greet', template: 'Hi {who}', input_variables: ['who'] },
  });
  await expectDocumented('listPrompts', auth);
  await expectDocumented('getPrompt', { ...auth, id: prompt.id });
  await expectDocumented('updatePrompt', { ...auth, id: prompt.id, body: { name: 'greeter' } });

  const tag = await expectDocumented('createTag', { ...auth, body: { name: 'demo', color: '#ABC' } });
  await expectDocumented('listTags', auth);
  await expectDocumented('getTag', { ...auth, id: tag.id });
  await expectDocumented('updateTag', { ...auth, id: tag.id, body: { color: '#0e8a16' } });

  const llm = { model: 'm', provider: 'p', api_key: 'never echoed' };
  const agent = await expectDocumented('createAgent', {
    ...auth,
    body: { name: 'helper', type: 'REACT', llm, hasMemory: true, promptId: prompt.id, documentId: doc.id, tags: [tag.id] },
  });
  const bare = await expectDocumented('createAgent', { ...auth, body: { name: 'bare', type: 'VENDOR_A', llm } });
  assert.deepEqual(bare.document, {});
  await expectDocumented('listAgents', auth);
  await expectDocumented('getAgent', { ...auth, id: agent.id });
  await expectDocumented('updateAgent', { ...auth, id: agent.id, body: { tags: [{ id: tag.id }], hasMemory: false } });
  const exported = await expectDocumented('exportAgent', { ...auth, id: agent.id, query: '?sessions=true' });
  await expectDocumented('importAgent', { ...auth, body: exported, query: '?dryRun=true' });

  // Running an agent, against a fake model server.
  const fake = await startFakeOpenAI();
  const runner = await expectDocumented('createAgent', {
    ...auth,
    body: {
      name: 'runner',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url },
      hasMemory: true,
      isListed: true,
      description: 'Runs.',
    },
  });
  const result = await expectDocumented('invokeAgent', { ...auth, id: runner.id, body: { input: 'hello', sessionId: 's1' } });
  assert.equal(result.output, 'ok');
  await expectDocumented('predictAgent', { ...auth, id: runner.id, body: { input: { input: 'hello' }, session: 's1' } });
  await expectDocumented('listAgentRuns', { ...auth, id: runner.id });
  await expectDocumented('getRun', { ...auth, id: result.runId });
  // The event log of the run above: a stream, so checked by hand.
  const log = await service.request('GET', `/api/v1/runs/${result.runId}/events`, auth);
  assert.equal(log.status, 200);
  assert.match(log.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.match(log.text, /^id: 1\nevent: run\n/m);
  assert.match(log.text, /event: done\n/);
  covered.add('getRunEvents');
  // A background run the model never answers, cancelled.
  fake.reply({ hang: true });
  const waiting = await service.request('POST', `/api/v1/agents/${runner.id}/invoke`, {
    ...auth,
    body: { input: 'wait', background: true },
  });
  assert.equal(waiting.status, 202);
  const cancelled = await expectDocumented('cancelRun', { ...auth, id: waiting.body.data.runId });
  assert.equal(cancelled.status, 'cancelled');
  // A run whose tool call waits for approval, answered (denied: the tool is never called).
  const gate = await service.request('POST', '/api/v1/tools', {
    ...auth,
    body: { name: 'gate', type: 'HOSTED_MODEL', metadata: { url: 'http://127.0.0.1:9/gate' } },
  });
  const gateLink = await service.request('POST', '/api/v1/agent-tools', {
    ...auth,
    body: { agentId: runner.id, toolId: gate.body.data.id, requiresApproval: true },
  });
  assert.equal(gateLink.status, 201);
  fake.reply({ toolCalls: [{ id: 'call_gate', name: 'gate', arguments: '{"input":"x"}' }] });
  const paused = await service.request('POST', `/api/v1/agents/${runner.id}/invoke`, { ...auth, body: { input: 'gated' } });
  assert.equal(paused.status, 202);
  assert.equal(paused.body.data.status, 'requires_action');
  await expectDocumented('answerRunActions', {
    ...auth,
    id: paused.body.data.runId,
    body: { actions: [{ id: 'call_gate', approve: false, reason: 'not now' }] },
  });
  await expectDocumented('listTraces', auth);
  await expectDocumented('listAgentSessions', { ...auth, id: runner.id });
  await expectDocumented('listSessionMessages', { ...auth, id: runner.id, sessionId: 's1' });
  await expectDocumented('deleteAgentSession', { ...auth, id: runner.id, sessionId: 's1' });
  const library = await expectDocumented('listLibraryAgents', auth);
  assert.ok(library.some((listed: Json) => listed.id === runner.id));
  const me = await expectDocumented('getUserMe', auth);
  await expectDocumented('getUser', { ...auth, id: me.id });

  // The link form of POST /agents answers an agent-document link.
  const viaAgents = await expectDocumented('createAgentDocumentViaAgents', { ...auth, body: { agentId: bare.id, documentId: doc.id } });
  assert.equal(viaAgents.documentId, doc.id);
  const agentDocument = await expectDocumented('createAgentDocument', { ...auth, body: { agentId: agent.id, documentId: doc.id } });
  await expectDocumented('listAgentDocuments', { ...auth, query: `?agentId=${agent.id}&documentId=${doc.id}&limit=5` });
  await expectDocumented('getAgentDocument', { ...auth, id: agentDocument.id });
  await expectDocumented('deleteAgentDocument', { ...auth, id: agentDocument.id });

  const agentTool = await expectDocumented('createAgentTool', { ...auth, body: { agentId: agent.id, toolId: tool.id } });
  await expectDocumented('listAgentTools', { ...auth, query: `?toolId=${tool.id}` });
  await expectDocumented('getAgentTool', { ...auth, id: agentTool.id });
  const changedLink = await expectDocumented('updateAgentTool', { ...auth, id: agentTool.id, body: { requiresApproval: true } });
  assert.equal(changedLink.requiresApproval, true);
  await expectDocumented('deleteAgentTool', { ...auth, id: agentTool.id });

  const webhook = await expectDocumented('createWebhook', { ...auth, body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } });
  await expectDocumented('listWebhooks', auth);
  await expectDocumented('getWebhook', { ...auth, id: webhook.id });
  await expectDocumented('updateWebhook', { ...auth, id: webhook.id, body: { enabled: false } });
  await expectDocumented('rotateWebhookSecret', { ...auth, id: webhook.id });
  await expectDocumented('sendWebhookTestEvent', { ...auth, id: webhook.id });
  await expectDocumented('listWebhookDeliveries', { ...auth, id: webhook.id });
  await expectDocumented('deleteWebhook', { ...auth, id: webhook.id });

  const modelServer = await startFakeOpenAI();
  const connection = await expectDocumented('createConnection', {
    ...auth,
    body: { name: 'box', provider: 'ollama', baseUrl: modelServer.url, apiKey: 'sk-x' },
  });
  await expectDocumented('listConnections', auth);
  await expectDocumented('getConnection', { ...auth, id: connection.id });
  await expectDocumented('updateConnection', { ...auth, id: connection.id, body: { name: 'the box' } });
  await expectDocumented('listConnectionModels', { ...auth, id: connection.id });
  await expectDocumented('testConnection', { ...auth, id: connection.id, body: { model: 'fake-model' } });
  await expectDocumented('deleteConnection', { ...auth, id: connection.id });

  await expectDocumented('deleteAgent', { ...auth, id: agent.id });
  await expectDocumented('deleteTag', { ...auth, id: tag.id });
  await expectDocumented('deletePrompt', { ...auth, id: prompt.id });
  await expectDocumented('deleteDocument', { ...auth, id: doc.id });
  await expectDocumented('deleteTool', { ...auth, id: tool.id });
  await expectDocumented('deleteApiToken', { ...auth, id: apiToken.id });
  // The OpenAI-compatible API, with the same token and agent.
  const models = await expectDocumented('listModels', { ...auth, header: 'Authorization' });
  assert.ok(models.data.some((model: Json) => model.id === runner.id));
  await expectDocumented('getModel', { ...auth, id: runner.id });
  const messages = [{ role: 'user', content: 'hello' }];
  await expectDocumented('createChatCompletion', { ...auth, body: { model: runner.id, messages } });
  const response = await expectDocumented('createResponse', { ...auth, body: { model: runner.id, input: 'hello' } });
  await expectDocumented('getResponse', { ...auth, id: response.id });
  await expectDocumented('deleteResponse', { ...auth, id: response.id });
  // A background response the model never answers, cancelled.
  fake.reply({ hang: true });
  const background = await expectDocumented('createResponse', { ...auth, body: { model: runner.id, input: 'wait', background: true } });
  assert.equal(background.status, 'in_progress');
  assert.equal((await expectDocumented('cancelResponse', { ...auth, id: background.id })).status, 'cancelled');

  await expectDocumented('getOpenApiDocument');
  await expectDocumented('getHealth');
  const ping = await call(service, 'mcp', {
    ...auth,
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    },
    headers: { accept: 'application/json, text/event-stream' },
  });
  // A client of the 2025 versions gets its answer as one `message` event of a stream; its data is the documented JSON-RPC answer.
  assert.equal(ping.status, operation('mcp').success.status);
  assert.equal(ping.headers.get('content-type'), 'text/event-stream');
  const message = JSON.parse(/^data: (.*)$/m.exec(ping.text)?.[1] ?? 'null');
  assert.ok(v.safeParse(successSchema(operation('mcp')), message).success, ping.text);
  assert.equal(message.result.protocolVersion, '2025-06-18');
  covered.add('mcp');
  await expectDocumented('deleteMe', { ...auth, body: { password } });

  assert.deepEqual(
    ROUTES.map((op) => op.operationId).filter((id) => !covered.has(id)),
    [],
    'operations this test did not call',
  );
});

test("the errors each operation documents are ones it really answers, in the error envelope (or its group's format)", async () => {
  const service = await startService();
  const { token } = await service.signUp();
  const missing = randomUUID();
  const documented = (op: Route, status: number) =>
    assert.ok(
      document.paths[openApiPath(fullPath(op))][op.method].responses[status],
      `${op.method} ${op.path} does not document ${status}`,
    );
  const expectError = (op: Route, reply: Reply, status: number) => {
    assert.equal(reply.status, status, `${op.method} ${op.path}: ${JSON.stringify(reply.body)}`);
    documented(op, status);
    assert.ok(v.safeParse(op.errorFormat?.schema ?? ErrorEnvelopeSchema, reply.body).success, JSON.stringify(reply.body));
  };

  for (const op of ROUTES.filter((route) => !route.when)) {
    const invalid = op.errorFormat?.validationStatus ?? 422;
    if (op.auth) expectError(op, await call(service, op.operationId, { id: missing }), 401);
    if (op.path.includes(':id') && op.method !== 'post') {
      // A body every PATCH accepts (unknown keys are ignored; api-tokens need a description).
      const body = op.method === 'patch' ? { description: 'x' } : undefined;
      expectError(op, await call(service, op.operationId, { token, id: missing, body }), 404);
      expectError(op, await call(service, op.operationId, { token, id: 'x'.repeat(65), body }), invalid);
    }
    if (op.body) {
      const auth = op.auth ? { token, id: missing } : { id: missing };
      expectError(op, await call(service, op.operationId, { ...auth, body: [] }), invalid);
      expectError(op, await call(service, op.operationId, { ...auth, raw: '{"name":', contentType: 'application/json' }), 400);
      expectError(op, await call(service, op.operationId, { ...auth, raw: 'name=x', contentType: 'text/plain' }), 415);
    }
    if (op.query) expectError(op, await call(service, op.operationId, { token, id: missing, query: '?limit=0' }), invalid);
  }
});
