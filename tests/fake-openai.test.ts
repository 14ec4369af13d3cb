// The fake OpenAI-compatible server answers the real `openai` client as the tests expect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

test('the fake answers plain, streamed, tool calls in pieces and errors through the openai client', async () => {
  const fake = await startFakeOpenAI();
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0, timeout: 2000 });
  fake.reply({ text: 'Hello there' });
  const plain = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(plain.choices[0].message.content, 'Hello there');
  assert.equal(fake.requests[0].headers.authorization, 'Bearer sk-test');
  assert.equal(fake.requests[0].body.messages[0].content, 'hi');

  fake.reply({ text: 'one two three', chunks: ['one ', 'two ', 'three'] });
  const stream = await client.chat.completions.create({ model: 'm', messages: [], stream: true });
  const pieces: string[] = [];
  for await (const chunk of stream) if (chunk.choices[0]?.delta.content) pieces.push(chunk.choices[0].delta.content);
  assert.deepEqual(pieces, ['one ', 'two ', 'three']);

  fake.reply({ toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a":1,"b":2}' }] });
  const toolStream = await client.chat.completions.create({ model: 'm', messages: [], stream: true });
  let args = '';
  let pieceCount = 0;
  for await (const chunk of toolStream) {
    for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
      if (call.function?.arguments) {
        args += call.function.arguments;
        pieceCount += 1;
      }
    }
  }
  assert.equal(args, '{"a":1,"b":2}');
  assert.ok(pieceCount > 1, 'arguments arrive in several pieces');

  fake.reply({ status: 500, message: 'boom' });
  await assert.rejects(client.chat.completions.create({ model: 'm', messages: [] }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 500);
    return true;
  });

  fake.reply({ hang: true });
  const short = new OpenAI({ apiKey: 'x', baseURL: fake.url, maxRetries: 0, timeout: 200 });
  await assert.rejects(short.chat.completions.create({ model: 'm', messages: [] }), OpenAI.APIConnectionTimeoutError);
  await fake.waitForAbort(fake.requests.at(-1)!);
  assert.equal(fake.requests.at(-1)!.aborted, true);
});
