// A background run is followed through its event log, so it reads the model's answer as it comes,
// streamed or not by its own client: a follower of GET /runs/{id}/events gets the text while the
// model is still writing, not all of it once the run is over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const fake = await startFakeOpenAI();
const service = await startService();
const user = await service.signUp();
const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-background-0123456789' };

test('a plain background run (no stream) sends its tokens to a follower as the model writes them', async () => {
  const agent = await service.create(user.token, '/agents', { name: 'Slow writer', type: 'VENDOR_A', llm });
  const chunks = ['One', ' two', ' three', ' four'];
  fake.reply({ text: chunks.join(''), chunks, chunkDelayMs: 150 });
  const accepted = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
    token: user.token,
    body: { input: 'Count to four, slowly.', background: true },
  });
  assert.equal(accepted.status, 202);
  const { runId } = accepted.body.data;

  const response = await fetch(`${service.url}/api/v1/runs/${runId}/events`, { headers: { Autorization: `Bearer ${user.token}` } });
  assert.equal(response.status, 200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  let firstTokenWhile: string | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    if (firstTokenWhile === undefined && text.includes('event: token\n')) {
      const run = await service.request('GET', `/api/v1/runs/${runId}`, { token: user.token });
      firstTokenWhile = run.body.data.status;
    }
  }
  assert.equal(fake.requests.at(-1)!.body.stream, true, 'the model was asked for a stream');
  assert.equal(firstTokenWhile, 'running', 'the first token came while the run was still going');
  const tokens = [...text.matchAll(/event: token\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]).text as string);
  assert.equal(tokens.join(''), 'One two three four');
  assert.ok(tokens.length > 1, `the text came in pieces (${tokens.length})`);
  assert.match(text, /event: done\n/);
  const run = await service.request('GET', `/api/v1/runs/${runId}`, { token: user.token });
  assert.equal(run.body.data.output, 'One two three four');
});
