// The model's streamed answer (server-sent events) is read in time proportional to its length,
// however the server cuts it: a line without a break, written 1 KiB at a time, is not searched
// again for every piece. One line (or event) longer than the bound fails the call in words.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createChatApi } from '../src/runs/chat-api.js';
import type { ModelEndpoint } from '../src/runs/model.js';
import { RunFailure } from '../src/runs/failures.js';

const KIB = 1024;
const MIB = 1024 * KIB;
/** Far above what a linear reading of a few MiB takes, far below the square of it. */
const BOUND_MS = 15_000;

const endpoint: ModelEndpoint = { baseUrl: 'http://model.test/v1', apiKey: 'k', model: 'm', userAimed: true };

/** A chat API whose user endpoint answers `text` as an event stream, in pieces of 1 KiB. */
function answering(text: string) {
  const bytes = new TextEncoder().encode(text);
  const fetch = async () => {
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.subarray(at, at + KIB));
        at += KIB;
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  return createChatApi({ allowPrivateNetworks: true, fetch });
}

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

async function readAll(text: string): Promise<string> {
  let content = '';
  await answering(text).stream(endpoint, { model: 'm', messages: [] }, new AbortController().signal, (part) => {
    content += part.choices[0]?.delta?.content ?? '';
  });
  return content;
}

describe('a streamed answer without line breaks, 1 KiB at a time', () => {
  it('is read in linear time: 3.5 MiB in one event', async () => {
    const content = 'x'.repeat(3.5 * MIB);
    const started = performance.now();
    assert.equal(await readAll(`${chunk('a')}${chunk(content)}data: [DONE]\n\n`), `a${content}`);
    const ms = performance.now() - started;
    assert.ok(ms < BOUND_MS, `${Math.round(ms)} ms`);
  });

  it('fails the call in words once one line passes 4 Mi characters, at once', async () => {
    const started = performance.now();
    const failure = await readAll(`${chunk('a')}data: {"choices":[{"index":0,"delta":{"content":"${'y'.repeat(16 * MIB)}`).then(
      () => assert.fail('a 16 MiB line was read'),
      (error: unknown) => error,
    );
    const ms = performance.now() - started;
    assert.ok(failure instanceof RunFailure, String(failure));
    assert.equal(failure.code, 'upstream_error');
    assert.match(
      failure.message,
      /^The model endpoint model\.test streamed an event \(or a line\) longer than 4 Mi characters; the run was stopped\.$/,
    );
    assert.ok(ms < BOUND_MS, `${Math.round(ms)} ms`);
  });

  it('reads many events split anywhere, a last event without its blank line included', async () => {
    const events = Array.from({ length: 5000 }, (_, i) => chunk(`w${i} `))
      .join('')
      .replace(/\n\n/g, (m, at: number) => (at % 3 === 0 ? '\r\n\r\n' : m));
    const expected = Array.from({ length: 5000 }, (_, i) => `w${i} `).join('');
    assert.equal(await readAll(events.trimEnd()), expected);
  });
});
