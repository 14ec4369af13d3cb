// Sign-up answers the new user with its password hash (`user.password`), because the interface the
// clients are written against shows it there. No other answer may carry a `password` field or a
// hash: this walks every mounted route (a new route without an entry below fails the test) and
// looks through each answer, nested records included.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type Json } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const service = await startService();
const PASSWORD = 'a long passphrase';

/** Every path in `value` whose key is `password`, and every string that looks like a scrypt hash. */
function passwordsIn(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return value.includes('$scrypt$') ? [`${path} (a hash)`] : [];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => [
    ...(key.toLowerCase().includes('password') ? [`${path}.${key}`] : []),
    ...passwordsIn(child, `${path}.${key}`),
  ]);
}

interface Call {
  /** The path with its parameters filled in (and a query string). */
  path: string;
  body?: Json;
  token?: string;
  headers?: Record<string, string>;
  /** A raw body with its content type (a multipart upload). */
  raw?: string;
  contentType?: string;
}

describe("no answer but sign-up's carries a password or its hash", () => {
  test('every route, walked with real records', async () => {
    const signUp = await service.request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Walker', email: 'walker@example.com', password: PASSWORD },
    });
    assert.equal(signUp.status, 201);
    assert.deepEqual(
      passwordsIn(signUp.body),
      ['.data.user.password', '.data.user.password (a hash)'],
      "sign-up keeps the interface's field",
    );

    const signIn = await service.request('POST', '/api/v1/auth/sign-in', { body: { email: 'walker@example.com', password: PASSWORD } });
    const token = signIn.body.data.token as string;
    const create = (path: string, body: Json) => service.create(token, path, body);
    const apiToken = await create('/api-tokens', { description: 'walk' });
    const tool = await create('/tools', { name: 'tool', type: 'SEARCH', metadata: { key: 'secret' } });
    const document = await create('/documents', {
      name: 'doc',
      type: 'TXT',
      url: 'https://example.com/a.txt',
      authorization: { password: 'a document password' },
    });
    const prompt = await create('/prompts', { name: 'p', template: 'Hi {who}', input_variables: ['who'] });
    const tag = await create('/tags', { name: 'tag', color: '#112233' });
    const agent = await create('/agents', {
      name: 'agent',
      type: 'REACT',
      llm: { model: 'm', provider: 'p', password: 'an llm password' },
      promptId: prompt.id,
      tags: [tag.id],
    });
    const agentTool = await create('/agent-tools', { agentId: agent.id, toolId: tool.id });
    const agentDocument = await create('/agent-documents', { agentId: agent.id, documentId: document.id });
    const fake = await startFakeOpenAI();
    const runner = await create('/agents', {
      name: 'runner',
      type: 'VENDOR_A',
      llm: { model: 'm', provider: 'openai-compatible', baseUrl: fake.url },
      hasMemory: true,
      isListed: true,
    });
    const run = (
      await service.request('POST', `/api/v1/agents/${runner.id}/invoke`, { token, body: { input: 'remember this', sessionId: 's1' } })
    ).body.data;
    const me = (await service.request('GET', '/api/v1/auth/me', { token })).body.data;
    /** Starts `start` and waits until its model request has arrived, so the reply queued for it is its own. */
    const reachingTheModel = async <T>(start: () => Promise<T>): Promise<T> => {
      const arrived = fake.waitForRequests(fake.requests.length + 1);
      const started = await start();
      await arrived;
      return started;
    };
    // A run waiting for approval of a call of `tool`, a background run and a background response the
    // model never answers (cancelled below), a stored response, and a webhook.
    const gated = await create('/tools', { name: 'gated', type: 'SEARCH', metadata: { url: 'http://127.0.0.1:9/' } });
    await create('/agent-tools', { agentId: runner.id, toolId: gated.id, requiresApproval: true });
    fake.reply({ toolCalls: [{ name: 'gated', arguments: '{"query":"otters"}' }] });
    const waiting = (await service.request('POST', `/api/v1/agents/${runner.id}/invoke`, { token, body: { input: 'search' } })).body.data;
    assert.equal(waiting.status, 'requires_action');
    fake.reply({ hang: true });
    const hanging = await reachingTheModel(
      async () =>
        (await service.request('POST', `/api/v1/agents/${runner.id}/invoke`, { token, body: { input: 'hang', background: true } })).body
          .data,
    );
    const response = (await service.request('POST', '/v1/responses', { token, body: { model: runner.id, input: 'hi' } })).body;
    fake.reply({ hang: true });
    const hangingResponse = await reachingTheModel(
      async () =>
        (await service.request('POST', '/v1/responses', { token, body: { model: runner.id, input: 'hang', background: true } })).body,
    );
    const webhook = await create('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    const connection = await create('/connections', {
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: fake.url,
      apiKey: 'a connection key',
    });
    const boundary = 'walk-boundary';
    const multipart = (name: string) =>
      [
        `--${boundary}`,
        `Content-Disposition: form-data; name="file"; filename="${name}.txt"`,
        'Content-Type: text/plain',
        '',
        'Otters hold hands.',
        `--${boundary}--`,
        '',
      ].join('\r\n');
    const uploadReply = await service.request('POST', '/api/v1/documents', {
      token,
      raw: multipart('first'),
      contentType: `multipart/form-data; boundary=${boundary}`,
    });
    assert.equal(uploadReply.status, 201, JSON.stringify(uploadReply.body));
    const uploaded = uploadReply.body.data;
    const mcpHeaders = { accept: 'application/json, text/event-stream' };
    const mcpCall = (method: string, params: Json) => ({ jsonrpc: '2.0', id: 1, method, params });

    // What each route is called with. Deletes come last, the account's own at the very end.
    const calls: Record<string, () => Call> = {
      'get /auth/options': () => ({ path: '/auth/options' }),
      'post /auth/sign-up': () => ({ path: '/auth/sign-up', body: { name: 'Second', email: 'second@example.com', password: PASSWORD } }),
      'post /auth/sign-in': () => ({ path: '/auth/sign-in', body: { email: 'walker@example.com', password: PASSWORD } }),
      'get /auth/me': () => ({ path: '/auth/me', token }),
      'patch /auth/me': () => ({ path: '/auth/me', token, body: { name: 'Walker Two' } }),
      'get /api-tokens': () => ({ path: '/api-tokens', token }),
      'post /api-tokens': () => ({ path: '/api-tokens', token, body: { description: 'another' } }),
      'get /api-tokens/:id': () => ({ path: `/api-tokens/${apiToken.id}`, token }),
      'patch /api-tokens/:id': () => ({ path: `/api-tokens/${apiToken.id}`, token, body: { description: 'renamed' } }),
      'get /tools': () => ({ path: '/tools', token }),
      'post /tools': () => ({ path: '/tools', token, body: { name: 'tool 2', type: 'SEARCH' } }),
      'get /tools/:id': () => ({ path: `/tools/${tool.id}`, token }),
      'patch /tools/:id': () => ({ path: `/tools/${tool.id}`, token, body: { name: 'tool renamed' } }),
      'get /documents/search': () => ({ path: '/documents/search?q=anything', token }),
      'post /documents/:id/ingest': () => ({ path: `/documents/${document.id}/ingest`, token }),
      'get /documents/:id/chunks': () => ({ path: `/documents/${document.id}/chunks`, token }),
      'get /documents/:id': () => ({ path: `/documents/${document.id}`, token }),
      'get /documents': () => ({ path: '/documents', token }),
      'post /documents': () => ({ path: '/documents', token, body: { name: 'doc 2', type: 'TXT', url: 'https://example.com/b.txt' } }),
      'patch /documents/:id': () => ({ path: `/documents/${document.id}`, token, body: { name: 'doc renamed' } }),
      'post /agents (createAgentDocumentViaAgents)': () => ({
        path: '/agents',
        token,
        body: { agentId: agent.id, documentId: (createdLater.document2 as Json).id },
      }),
      'get /agents': () => ({ path: '/agents', token }),
      'post /agents': () => ({ path: '/agents', token, body: { name: 'agent 2', type: 'REACT', llm: { model: 'm', provider: 'p' } } }),
      'get /agents/:id': () => ({ path: `/agents/${agent.id}`, token }),
      'patch /agents/:id': () => ({ path: `/agents/${agent.id}`, token, body: { name: 'agent renamed' } }),
      'get /prompts': () => ({ path: '/prompts', token }),
      'post /prompts': () => ({ path: '/prompts', token, body: { name: 'p2', template: 'x', input_variables: [] } }),
      'get /prompts/:id': () => ({ path: `/prompts/${prompt.id}`, token }),
      'patch /prompts/:id': () => ({ path: `/prompts/${prompt.id}`, token, body: { name: 'p renamed' } }),
      'get /tags': () => ({ path: '/tags', token }),
      'post /tags': () => ({ path: '/tags', token, body: { name: 'tag 2', color: '#445566' } }),
      'get /tags/:id': () => ({ path: `/tags/${tag.id}`, token }),
      'patch /tags/:id': () => ({ path: `/tags/${tag.id}`, token, body: { name: 'tag renamed' } }),
      'get /agent-documents': () => ({ path: '/agent-documents', token }),
      'post /agent-documents': () => ({
        path: '/agent-documents',
        token,
        body: { agentId: (createdLater.agent2 as Json).id, documentId: document.id },
      }),
      'get /agent-documents/:id': () => ({ path: `/agent-documents/${agentDocument.id}`, token }),
      'get /agent-tools': () => ({ path: '/agent-tools', token }),
      'post /agent-tools': () => ({ path: '/agent-tools', token, body: { agentId: (createdLater.agent2 as Json).id, toolId: tool.id } }),
      'get /agent-tools/:id': () => ({ path: `/agent-tools/${agentTool.id}`, token }),
      'get /agents/:id/export': () => ({ path: `/agents/${runner.id}/export?sessions=true`, token }),
      'post /agents/import': () => ({
        path: '/agents/import',
        token,
        body: {
          format: 'agent-service.agent',
          version: 1,
          exportedAt: '2026-01-01T00:00:00.000000+00:00',
          agent: {
            name: 'imported',
            description: null,
            avatarUrl: null,
            type: 'REACT',
            hasMemory: false,
            llm: { model: 'm', provider: 'p', baseUrl: null, apiKeyNeeded: false },
          },
          prompt: null,
          tags: [],
          tools: [],
          documents: [],
        },
      }),
      'get /agents/library': () => ({ path: '/agents/library', token }),
      'post /agents/:id/invoke': () => ({ path: `/agents/${runner.id}/invoke`, token, body: { input: 'hi', sessionId: 's1' } }),
      'post /agents/:id/predict': () => ({ path: `/agents/${runner.id}/predict`, token, body: { input: { input: 'hi' } } }),
      'get /agents/:id/runs': () => ({ path: `/agents/${runner.id}/runs`, token }),
      'get /runs/:id': () => ({ path: `/runs/${run.runId}`, token }),
      'get /traces': () => ({ path: '/traces', token }),
      'get /agents/:id/sessions': () => ({ path: `/agents/${runner.id}/sessions`, token }),
      'get /agents/:id/sessions/:sessionId/messages': () => ({ path: `/agents/${runner.id}/sessions/s1/messages`, token }),
      'get /users/me': () => ({ path: '/users/me', token }),
      'get /users/:id': () => ({ path: `/users/${me.id}`, token }),
      'get /runs/:id/events': () => ({ path: `/runs/${run.runId}/events`, token }),
      'post /runs/:id/cancel': () => ({ path: `/runs/${hanging.runId}/cancel`, token }),
      'post /runs/:id/actions': () => ({
        path: `/runs/${waiting.runId}/actions`,
        token,
        body: { actions: [{ id: waiting.actions[0].id, approve: false, reason: 'not now' }] },
      }),
      'patch /agent-tools/:id': () => ({ path: `/agent-tools/${agentTool.id}`, token, body: { requiresApproval: true } }),
      'get /tools/:id/functions': () => ({ path: `/tools/${tool.id}/functions`, token }),
      'post /webhooks': () => ({ path: '/webhooks', token, body: { url: 'http://127.0.0.1:9/other', events: ['run.succeeded'] } }),
      'get /webhooks': () => ({ path: '/webhooks', token }),
      'get /webhooks/:id': () => ({ path: `/webhooks/${webhook.id}`, token }),
      'patch /webhooks/:id': () => ({ path: `/webhooks/${webhook.id}`, token, body: { description: 'renamed' } }),
      'get /webhooks/:id/deliveries': () => ({ path: `/webhooks/${webhook.id}/deliveries`, token }),
      'post /webhooks/:id/rotate-secret': () => ({ path: `/webhooks/${webhook.id}/rotate-secret`, token }),
      'post /webhooks/:id/test': () => ({ path: `/webhooks/${webhook.id}/test`, token }),
      'post /mcp': () => ({ path: '/mcp', token, headers: mcpHeaders, body: mcpCall('tools/list', {}) }),
      'get /v1/models': () => ({ path: '/v1/models', token }),
      'get /v1/models/:id': () => ({ path: `/v1/models/${runner.id}`, token }),
      'post /v1/chat/completions': () => ({
        path: '/v1/chat/completions',
        token,
        body: { model: runner.id, messages: [{ role: 'user', content: 'hi' }] },
      }),
      'post /v1/responses': () => ({ path: '/v1/responses', token, body: { model: runner.id, input: 'hi' } }),
      'get /v1/responses/:id': () => ({ path: `/v1/responses/${response.id}`, token }),
      'post /v1/responses/:id/cancel': () => ({ path: `/v1/responses/${hangingResponse.id}/cancel`, token }),
      'delete /v1/responses/:id': () => ({ path: `/v1/responses/${response.id}`, token }),
      'delete /webhooks/:id': () => ({ path: `/webhooks/${webhook.id}`, token }),
      'post /documents (uploadDocument)': () => ({
        path: '/documents',
        token,
        raw: multipart('second'),
        contentType: `multipart/form-data; boundary=${boundary}`,
      }),
      'get /documents/:id/file': () => ({ path: `/documents/${uploaded.id}/file`, token }),
      'post /connections': () => ({
        path: '/connections',
        token,
        body: { name: 'other', provider: 'openai-compatible', baseUrl: fake.url },
      }),
      'get /connections': () => ({ path: '/connections', token }),
      'get /connections/:id': () => ({ path: `/connections/${connection.id}`, token }),
      'patch /connections/:id': () => ({ path: `/connections/${connection.id}`, token, body: { name: 'renamed' } }),
      'get /connections/:id/models': () => ({ path: `/connections/${connection.id}/models`, token }),
      'post /connections/:id/test': () => ({ path: `/connections/${connection.id}/test`, token, body: {} }),
      'delete /connections/:id': () => ({ path: `/connections/${connection.id}`, token }),
      'get /healthz': () => ({ path: '/healthz' }),
      'get /openapi.json': () => ({ path: '/openapi.json' }),
      'delete /agents/:id/sessions/:sessionId': () => ({ path: `/agents/${runner.id}/sessions/s1`, token }),
      'delete /agent-documents/:id': () => ({ path: `/agent-documents/${agentDocument.id}`, token }),
      'delete /agent-tools/:id': () => ({ path: `/agent-tools/${agentTool.id}`, token }),
      'delete /agents/:id': () => ({ path: `/agents/${agent.id}`, token }),
      'delete /documents/:id': () => ({ path: `/documents/${document.id}`, token }),
      'delete /tools/:id': () => ({ path: `/tools/${tool.id}`, token }),
      'delete /prompts/:id': () => ({ path: `/prompts/${prompt.id}`, token }),
      'delete /tags/:id': () => ({ path: `/tags/${tag.id}`, token }),
      'delete /api-tokens/:id': () => ({ path: `/api-tokens/${apiToken.id}`, token }),
      'delete /auth/me': () => ({ path: '/auth/me', token, body: { password: PASSWORD } }),
    };
    const createdLater: Record<string, Json> = {
      document2: await create('/documents', { name: 'doc 3', type: 'TXT', url: 'https://example.com/c.txt' }),
      agent2: await create('/agents', { name: 'agent 3', type: 'REACT', llm: { model: 'm', provider: 'p' } }),
    };

    // A route served only for some requests (`when`) is named by its operation too.
    const keyOf = (route: (typeof service.app.routes)[number]) =>
      `${route.method} ${route.path}${route.when ? ` (${route.operationId})` : ''}`;
    const mounted = service.app.routes.map(keyOf);
    assert.deepEqual(
      mounted.filter((key) => !(key in calls)),
      [],
      'every route has a call here',
    );
    assert.deepEqual(
      Object.keys(calls).filter((key) => !mounted.includes(key)),
      [],
      'every call here is a route',
    );

    const found: string[] = [];
    for (const [key, make] of Object.entries(calls)) {
      const route = service.app.routes.find((candidate) => keyOf(candidate) === key)!;
      const call = make();
      const prefix = route.root || call.path === '/openapi.json' ? (route.root ? '' : '/api/v1') : '/api/v1';
      const reply = await service.request(route.method.toUpperCase(), `${prefix}${call.path}`, {
        token: call.token,
        body: call.body,
        headers: call.headers,
        raw: call.raw,
        contentType: call.contentType,
      });
      assert.ok(reply.status < 300, `${key}: ${reply.status} ${JSON.stringify(reply.body)}`);
      if (key === 'post /auth/sign-up') {
        assert.ok(reply.body.data.user.password.startsWith('$scrypt$'));
        continue;
      }
      // The OpenAPI document describes sign-up's answer, so it names the field; it holds no value.
      if (key === 'get /openapi.json') continue;
      found.push(...passwordsIn(reply.body).map((where) => `${key}: ${where}`));
    }
    assert.deepEqual(found, []);
  });
});
