// An event stream lives as long as its API token works: once the token is revoked (through the API
// or by an operator's script), expires, or its account is deleted or disabled, every stream it
// opened ends with an error event in that stream's own format. A background run goes on; a run
// that lives only for its stream is cancelled, as when its client leaves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, closeDatabase } from '../src/db.js';
import { formatTimestamp } from '../src/lib/ids.js';
import { startService, waitFor, type Json } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { runScript } from './run-script.js';

const fake = await startFakeOpenAI();
// Every run's model writes a little, then never finishes: its streams stay open until something ends them.
fake.setDefault({ hangAfter: ['One', ' two'] });
const service = await startService();
const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-revoke-0123456789' };

/** Generous bound on anything the service does "at once" or "within seconds" (a loaded machine is slow). */
const LIMIT_MS = 30_000;

interface SseEvent {
  id?: string;
  name?: string;
  data: string;
}

/** An open event stream: its text so far, its events, and whether it has ended. */
interface OpenStream {
  text: string;
  ended: boolean;
  events(): SseEvent[];
  /** Resolves once `check` holds of the text received. */
  until(what: string, check: (text: string) => boolean): Promise<void>;
  /** Resolves once the service has ended the stream. */
  end(): Promise<SseEvent[]>;
}

/** Opens `method path` as the holder of `token` and reads its event stream as it comes. */
async function openStream(method: string, path: string, token: string, body?: unknown): Promise<OpenStream> {
  const response = await fetch(service.url + path, {
    method,
    headers: { Autorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.equal(response.status, 200, `${method} ${path}: ${response.status}`);
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const stream: OpenStream = {
    text: '',
    ended: false,
    events: () =>
      stream.text
        .split('\n\n')
        .filter((block) => block.trim() !== '' && !block.startsWith(':'))
        .map((block) => {
          const event: SseEvent = { data: '' };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            const [field, ...rest] = line.split(': ');
            if (field === 'id') event.id = rest.join(': ');
            else if (field === 'event') event.name = rest.join(': ');
            else if (field === 'data') data.push(rest.join(': '));
          }
          event.data = data.join('\n');
          return event;
        }),
    until: (what, check) => waitFor(what, () => check(stream.text), LIMIT_MS).then(() => undefined),
    end: () => waitFor(`${method} ${path} to end`, () => stream.ended, LIMIT_MS).then(() => stream.events()),
  };
  void (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      stream.text += value;
    }
    stream.ended = true;
  })();
  return stream;
}

/** A new user with an agent on the fake model, and a second token of theirs (`other`). */
async function userWithAgent(): Promise<{ token: string; password: string; agent: Json; other: Json }> {
  const { token, password } = await service.signUp();
  const agent = await service.create(token, '/agents', { name: 'Slow writer', type: 'VENDOR_A', llm });
  const other = await service.create(token, '/api-tokens', { description: 'for a stream' });
  return { token, password, agent, other };
}

/** Starts a background run of `agent` and returns its id. */
async function startBackground(token: string, agent: Json, input = 'Count slowly.'): Promise<string> {
  const accepted = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input, background: true } });
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  return accepted.body.data.runId;
}

const runOf = async (token: string, runId: string) => (await service.request('GET', `/api/v1/runs/${runId}`, { token })).body.data;
const hasToken = (text: string) => text.includes('event: token\n');

test('GET /runs/{id}/events: revoking its token ends the stream with an `unauthorized` error; the run and the streams of other tokens go on', async () => {
  const { token, agent, other } = await userWithAgent();
  const runId = await startBackground(token, agent);
  const revoked = await openStream('GET', `/api/v1/runs/${runId}/events`, other.token);
  const kept = await openStream('GET', `/api/v1/runs/${runId}/events`, token);
  await revoked.until('a token event on the stream to revoke', hasToken);
  await kept.until('a token event on the stream kept', hasToken);

  const deleted = await service.request('DELETE', `/api/v1/api-tokens/${other.id}`, { token });
  assert.equal(deleted.status, 200);
  const events = await revoked.end();
  const last = events.at(-1)!;
  assert.equal(last.name, 'error');
  assert.equal(last.id, undefined, 'not an event of the run: no id');
  const error = JSON.parse(last.data);
  assert.equal(error.code, 'unauthorized');
  assert.match(error.message, /revoked/);
  assert.equal(events.filter((event) => event.name === 'error').length, 1);

  assert.equal((await runOf(token, runId)).status, 'running', 'the background run goes on');
  assert.equal(kept.ended, false, 'the stream of a token still working stays open');
  const cancel = await service.request('POST', `/api/v1/runs/${runId}/cancel`, { token });
  assert.equal(cancel.status, 200);
  const keptLast = (await kept.end()).at(-1)!;
  assert.equal(keptLast.name, 'error');
  assert.equal(JSON.parse(keptLast.data).code, 'cancelled', 'the other stream followed the run to its end');
});

test('a streamed invoke (not background): revoking its token ends the stream and cancels the run, as a client leaving does', async () => {
  const { token, agent, other } = await userWithAgent();
  const input = `Stream to a revoked token ${Date.now()}`;
  const stream = await openStream('POST', `/api/v1/agents/${agent.id}/invoke`, other.token, { input, stream: true });
  await stream.until('a token event', hasToken);
  const runId = JSON.parse(stream.events().find((event) => event.name === 'run')!.data).runId as string;
  const modelRequest = fake.requests.find((request) => JSON.stringify(request.body).includes(input))!;
  assert.ok(modelRequest, 'the model was asked');

  assert.equal((await service.request('DELETE', `/api/v1/api-tokens/${other.id}`, { token })).status, 200);
  const last = (await stream.end()).at(-1)!;
  assert.equal(last.name, 'error');
  assert.equal(JSON.parse(last.data).code, 'unauthorized');
  await fake.waitForAbort(modelRequest);
  const run = await waitFor(
    'the run to end',
    async () => {
      const now = await runOf(token, runId);
      return now.status === 'running' ? undefined : now;
    },
    LIMIT_MS,
  );
  assert.equal(run.status, 'cancelled');
  assert.match(run.error, /revoked.*cancelled/);
});

test("a password change revokes the caller's other tokens: their streams end at once; predict says it as its own `error` then `[END]`", async () => {
  const { token, password, agent, other } = await userWithAgent();
  const runId = await startBackground(token, agent);
  const events = await openStream('GET', `/api/v1/runs/${runId}/events`, other.token);
  const predict = await openStream('POST', `/api/v1/agents/${agent.id}/predict`, other.token, {
    input: { input: 'Hi' },
    has_streaming: true,
  });
  await events.until('a token event', hasToken);
  await predict.until('a piece of the answer', (text) => text.includes('data: One'));

  const changed = await service.request('PATCH', '/api/v1/auth/me', {
    token,
    body: { password: 'a brand new passphrase', currentPassword: password },
  });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  const last = (await events.end()).at(-1)!;
  assert.equal(last.name, 'error');
  assert.equal(JSON.parse(last.data).code, 'unauthorized');
  const said = await predict.end();
  assert.deepEqual(
    said.slice(-2).map((event) => [event.name, event.data]),
    [
      ['error', 'The API token was revoked (or its account deleted).'],
      [undefined, '[END]'],
    ],
  );
  assert.equal((await runOf(token, runId)).status, 'running', 'the background run goes on');
  assert.equal((await service.request('POST', `/api/v1/runs/${runId}/cancel`, { token })).status, 200);
});

test('deleting the account (DELETE /auth/me) ends the streams of its tokens at once', async () => {
  const { token, password, agent, other } = await userWithAgent();
  const runId = await startBackground(token, agent);
  const stream = await openStream('GET', `/api/v1/runs/${runId}/events`, other.token);
  await stream.until('a token event', hasToken);

  const gone = await service.request('DELETE', '/api/v1/auth/me', { token, body: { password } });
  assert.equal(gone.status, 200, JSON.stringify(gone.body));
  const last = (await stream.end()).at(-1)!;
  assert.equal(last.name, 'error');
  // The stream's token is gone, and so are the account's runs, stopped with it: whichever the
  // stream hears of first ends it.
  assert.ok(['unauthorized', 'cancelled'].includes(JSON.parse(last.data).code), last.data);
});

test('the OpenAI-compatible streams end in their own format: an `invalid_api_key` error chunk then [DONE]; a response `error` event', async () => {
  const { token, agent, other } = await userWithAgent();
  const chat = await openStream('POST', '/v1/chat/completions', other.token, {
    model: agent.id,
    messages: [{ role: 'user', content: 'Hi' }],
    stream: true,
  });
  const background = await service.request('POST', '/v1/responses', { token, body: { model: agent.id, input: 'Hi', background: true } });
  assert.equal(background.status, 200, JSON.stringify(background.body));
  const responseId = background.body.id as string;
  const response = await openStream('GET', `/v1/responses/${responseId}?stream=true`, other.token);
  await chat.until('a chunk of the answer', (text) => text.includes('"content":"One"'));
  await response.until('a delta of the answer', (text) => text.includes('event: response.output_text.delta'));

  assert.equal((await service.request('DELETE', `/api/v1/api-tokens/${other.id}`, { token })).status, 200);
  const chunks = await chat.end();
  assert.equal(chunks.at(-1)!.data, '[DONE]');
  const { error } = JSON.parse(chunks.at(-2)!.data);
  assert.equal(error.code, 'invalid_api_key');
  assert.equal(error.type, 'invalid_request_error');
  assert.match(error.message, /revoked/);

  const said = await response.end();
  const last = said.at(-1)!;
  assert.equal(last.name, 'error');
  const data = JSON.parse(last.data);
  assert.equal(data.type, 'error');
  assert.equal(data.code, 'invalid_api_key');
  assert.equal(data.sequence_number, JSON.parse(said.at(-2)!.data).sequence_number + 1);
  const stored = await service.request('GET', `/v1/responses/${responseId}`, { token });
  assert.equal(stored.body.status, 'in_progress', 'the background response goes on');
  assert.equal((await service.request('POST', `/v1/responses/${responseId}/cancel`, { token })).status, 200);
});

test('a token revoked or an account disabled by an operator script (another process), or a token expired, ends its streams within seconds', async () => {
  const env = { DATABASE_PATH: service.config.databasePath };
  const revokedBy = await userWithAgent();
  const disabledBy = await userWithAgent();
  const expiring = await userWithAgent();
  const streams = await Promise.all(
    [revokedBy, disabledBy, expiring].map(async ({ token, agent, other }) =>
      openStream('GET', `/api/v1/runs/${await startBackground(token, agent)}/events`, other.token),
    ),
  );
  for (const stream of streams) await stream.until('a token event', hasToken);

  const revoked = await runScript('scripts/admin-token-revoke.ts', ['--id', revokedBy.other.id], env);
  assert.equal(revoked.code, 0, revoked.stderr);
  const me = (await service.request('GET', '/api/v1/auth/me', { token: disabledBy.token })).body.data;
  const disabled = await runScript('scripts/admin-user-disable.ts', ['--email', me.email], env);
  assert.equal(disabled.code, 0, disabled.stderr);
  // The token's time comes: written into the past, as the passing of time would make it.
  const db = openDatabase(service.config.databasePath);
  try {
    db.prepare('UPDATE api_tokens SET expires_at = ? WHERE id = ?').run(formatTimestamp(Date.now() - 1000), expiring.other.id);
  } finally {
    closeDatabase(db);
  }

  const errors = await Promise.all(
    streams.map(async (stream) => {
      const last = (await stream.end()).at(-1)!;
      assert.equal(last.name, 'error');
      return JSON.parse(last.data) as { code: string; message: string };
    }),
  );
  assert.equal(errors[0].code, 'unauthorized');
  assert.match(errors[0].message, /revoked/);
  // A disabled account's runs stop too, at their next step: whichever the stream hears of first ends it.
  assert.ok(['unauthorized', 'cancelled'].includes(errors[1].code), errors[1].code);
  assert.match(errors[1].message, /disabled/);
  assert.equal(errors[2].code, 'unauthorized');
  assert.match(errors[2].message, /expired/);
});
