// The chat-completions call on the wire (src/runs/chat-api.ts) against a fixture server that
// answers the way real OpenAI-compatible servers do, and the ways they go wrong: Ollama's error
// bodies, events split anywhere (CRLF, comments, a character cut in two), an error event mid-stream,
// an answer that is not JSON, an endless stream, and answers whose fields have the wrong shapes.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createChatApi, MAX_ANSWER_BYTES, type ChatParams } from '../src/runs/chat-api.js';
import { createConnectionPool, KEPT_CONNECTIONS } from '../src/ingest/fetch.js';
import { RunFailure } from '../src/runs/failures.js';
import { createModelCall } from '../src/runs/model-call.js';
import { startRecordingServer } from './fixtures/recording-server.js';

const KEY = 'sk-chat-api-secret-0123456789';
let answer: (res: http.ServerResponse) => unknown = (res) => res.end();
const { server, base, seen } = await startRecordingServer((_req, res) => void answer(res));
after(() => {
  server.closeAllConnections();
  server.close();
});

const api = createChatApi({ allowPrivateNetworks: false });
const endpoint = { baseUrl: `${base}/v1`, apiKey: KEY, model: 'm', userAimed: false };
const params = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
const signal = () => new AbortController().signal;

/** Writes `parts` as separate TCP writes, a little apart, then ends the answer. */
async function writeApart(res: http.ServerResponse, parts: (string | Buffer)[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const part of parts) {
    res.write(part);
    await sleep(5);
  }
  res.end();
}

const chunk = (delta: object) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta }] });

async function failure(promise: Promise<unknown>): Promise<RunFailure> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof RunFailure, `a RunFailure, not ${String(error)}`);
  return error;
}

/** The text a streamed call hands on, chunk by chunk. */
async function collect(params: ChatParams, signal: AbortSignal): Promise<string> {
  let text = '';
  await api.stream(endpoint, params, signal, (piece) => {
    text += String(piece.choices?.[0]?.delta?.content ?? '');
  });
  return text;
}

describe('what is sent', () => {
  test('a streamed call posts the model, the messages, stream and usage, with the key as a bearer token', async () => {
    answer = (res) => writeApart(res, [`data: ${chunk({ content: 'ok' })}\n\n`, 'data: [DONE]\n\n']);
    assert.equal(await collect(params, signal()), 'ok');
    const request = seen.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1/chat/completions');
    assert.equal(request.headers.authorization, `Bearer ${KEY}`);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request.body), { ...params, stream: true, stream_options: { include_usage: true } });
  });
});

describe('reading a stream', () => {
  test('events split anywhere come together: CRLF line ends, comments, an event over two writes, a character cut in two', async () => {
    const text = chunk({ content: 'Grüße ✓' });
    const bytes = Buffer.from(`data: ${text}\r\n\r\n`);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1; // inside the three bytes of ✓
    answer = (res) =>
      writeApart(res, [
        ': keep-alive\n\n',
        `data: ${chunk({ role: 'assistant', content: '' })}\n`,
        '\n',
        bytes.subarray(0, cut),
        bytes.subarray(cut),
        `data: ${chunk({ content: '!' })}`,
        '\n\ndata: [DONE]\n\n',
      ]);
    assert.equal(await collect(params, signal()), 'Grüße ✓!');
  });

  test('a last event without its blank line still counts', async () => {
    answer = (res) => writeApart(res, [`data: ${chunk({ content: 'tail' })}`]);
    assert.equal(await collect(params, signal()), 'tail');
  });

  test('an error event mid-stream fails the call with its message', async () => {
    answer = (res) =>
      writeApart(res, [`data: ${chunk({ content: 'half' })}\n\n`, `data: {"error":{"message":"the model is overloaded"}}\n\n`]);
    const error = await failure(collect(params, signal()));
    assert.equal(error.code, 'upstream_error');
    assert.match(error.message, /reported an error while answering: the model is overloaded$/);
  });

  test('after an error event, nothing more is handed on, not even pieces already read', async () => {
    answer = (res) => {
      // All at once: the pieces after the error are already read when it is found.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"error":{"message":"the model is overloaded"}}\n\n');
      for (let k = 0; k < 5; k++) res.write(`data: ${chunk({ content: `after ${k}` })}\n\n`);
      res.end();
    };
    let handed = 0;
    const error = await failure(api.stream(endpoint, params, signal(), () => void handed++));
    assert.match(error.message, /the model is overloaded/);
    assert.equal(handed, 0, 'no chunk after the error reaches the run');
  });

  test('an event that is not JSON fails the call as unreadable', async () => {
    answer = (res) => writeApart(res, ['data: {not json\n\n']);
    assert.match((await failure(collect(params, signal()))).message, /sent an answer that could not be read: an event is not JSON/);
  });

  test(`an endless stream is cut off after ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`, async () => {
    const comment = Buffer.from(`: ${'x'.repeat(64 * 1024)}\n`);
    let open = true;
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.on('close', () => (open = false));
      const pump = () => {
        while (open && res.write(comment));
        if (open) res.once('drain', pump);
      };
      pump();
    };
    assert.match((await failure(collect(params, signal()))).message, /sent an answer larger than 32 MiB/);
  });
});

describe('failures in words', () => {
  test("Ollama's error body (a string) is the message; the key never appears", async () => {
    answer = (res) =>
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: `model "m" not found, try pulling it first (${KEY})` }));
    const error = await failure(api.complete(endpoint, params, signal()));
    assert.equal(error.code, 'upstream_error');
    assert.match(error.message, /answered 404: model "m" not found, try pulling it first/);
    assert.ok(!error.message.includes(KEY));
  });

  test('an error body that is plain text is the message', async () => {
    answer = (res) => res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway from the proxy\n');
    assert.match((await failure(api.complete(endpoint, params, signal()))).message, /answered 502: Bad Gateway from the proxy$/);
  });

  test('a 200 that is not JSON (a login page in front of the API) is unreadable, not an empty answer', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Sign in</html>');
    assert.match(
      (await failure(api.complete(endpoint, params, signal()))).message,
      /sent an answer that could not be read: it is not JSON/,
    );
  });

  test('nothing listening is "could not reach", with the cause', async () => {
    const closed = { ...endpoint, baseUrl: 'http://127.0.0.1:9/v1' };
    assert.match(
      (await failure(api.complete(closed, params, signal()))).message,
      /^Could not reach the model endpoint 127\.0\.0\.1:9 \(ECONNREFUSED\)\.$/,
    );
  });

  test("an aborted call throws the signal's reason, not a failure of its own", async () => {
    answer = () => {}; // never answers
    const controller = new AbortController();
    const call = api.complete(endpoint, params, controller.signal);
    setTimeout(() => controller.abort(new Error('the run stopped')), 50);
    await assert.rejects(call, /the run stopped/);
  });
});

describe('answers of the wrong shape', () => {
  const modelCall = (streaming: boolean) =>
    createModelCall({ endpoint, api, maxSteps: 8, signal: signal(), streaming, emitToken: () => {} });

  test('a plain answer with tool_calls and content of the wrong types is an empty reply, not a crash', async () => {
    answer = (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ choices: [{ message: { content: 5, tool_calls: 'all of them' } }], usage: null }));
    assert.deepEqual(await modelCall(false).chat({ messages: params.messages }), { content: '', toolCalls: [] });
    answer = (res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          choices: [
            {
              message: {
                content: 'ok',
                tool_calls: [
                  null,
                  { type: 'function', function: { name: 7 } },
                  { type: 'function', id: 'c1', function: { name: 'add', arguments: '{}' } },
                ],
              },
            },
          ],
        }),
      );
    assert.deepEqual(await modelCall(false).chat({ messages: params.messages }), {
      content: 'ok',
      toolCalls: [{ id: 'c1', name: 'add', arguments: '{}' }],
    });
  });

  test('streamed tool-call pieces of the wrong shapes are skipped; the good ones come together', async () => {
    answer = (res) =>
      writeApart(res, [
        `data: ${chunk({ content: 7, tool_calls: [null, 'x', { index: 'a', function: { name: 3 } }] })}\n\n`,
        `data: ${chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'add', arguments: '{"a"' } }] })}\n\n`,
        `data: ${chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] })}\n\n`,
        `data: ${JSON.stringify({ choices: 'none' })}\n\n`,
        'data: [DONE]\n\n',
      ]);
    const reply = await modelCall(true).chat({ messages: params.messages });
    assert.equal(reply.content, '');
    assert.deepEqual(
      reply.toolCalls.find((call) => call.name === 'add'),
      { id: 'c1', name: 'add', arguments: '{"a":1}' },
    );
  });
});

describe("a user's endpoint (through the guarded fetch)", () => {
  const pool = createConnectionPool(KEPT_CONNECTIONS);
  after(() => pool.close());
  const userEndpoint = { ...endpoint, userAimed: true };

  test('calls, streamed and plain, share one kept-alive connection, within a run and from one run to the next', async () => {
    let opened = 0;
    const count = () => (opened += 1);
    server.on('connection', count);
    try {
      const pooled = createChatApi({ allowPrivateNetworks: true, pool });
      answer = (res) => writeApart(res, [`data: ${chunk({ content: 'one' })}\n\n`, 'data: [DONE]\n\n']);
      let text = '';
      await pooled.stream(userEndpoint, params, signal(), (piece) => (text += piece.choices?.[0]?.delta?.content ?? ''));
      assert.equal(text, 'one');
      answer = (res) => res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'two' } }] }));
      assert.equal((await pooled.complete(userEndpoint, params, signal())).choices[0].message.content, 'two');
      answer = (res) => writeApart(res, [`data: ${chunk({ content: 'three' })}\n\n`, 'data: [DONE]\n\n']);
      text = '';
      await pooled.stream(userEndpoint, params, signal(), (piece) => (text += piece.choices?.[0]?.delta?.content ?? ''));
      assert.equal(text, 'three');
      assert.equal(opened, 1, 'one connection for the three calls');
    } finally {
      server.off('connection', count);
    }
  });

  test('a kept connection is no way around the address guard: the host is vetted at every call', async () => {
    answer = (res) => res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'kept' } }] }));
    await createChatApi({ allowPrivateNetworks: true, pool }).complete(userEndpoint, params, signal());
    const before = seen.length;
    const guarded = createChatApi({ allowPrivateNetworks: false, pool });
    const refused = await failure(guarded.complete(userEndpoint, params, signal()));
    assert.match(refused.message, /Could not reach the model endpoint 127\.0\.0\.1:\d+: .*(private|local|not allowed)/i);
    assert.equal(seen.length, before, 'nothing was sent');
  });
});
