// The model the agent-run cases of `npm run bench` talk to: an OpenAI-compatible chat-completions
// server on 127.0.0.1 that answers at once, plain or streamed as the request asks, and keeps no
// record of what it was sent (its memory stays flat however long the benchmark runs). A streamed
// request whose last message holds the text in HOLD_MARKER (set by the benchmark) gets its first
// piece of text and is then held open until the client goes away: the open streams of the benchmark.
// One whose last message holds `<PACED_MARKER>:<tokens>:<per second>` gets that many pieces of
// text (`t1`, ` t2` …, all different, so that a text put together in the wrong order shows) at
// that pace, the first at once: the streaming runs of the durable-runs case.
// With TOOL_CALL_MARKER and TOOL_CALL_NAME set, a plain request whose last message is the user's and
// holds the marker is answered with a call of that function (arguments {"a":2,"b":3}) instead; the
// request that follows (its last message the tool's answer) gets the text.
//
//   PORT=0 HOLD_MARKER=word PACED_MARKER=word node --import tsx scripts/bench/fake-model.ts
// On listening it writes one JSON line `{"msg":"listening","url":"http://127.0.0.1:PORT"}`; the
// OpenAI base URL is that URL + `/v1`. GET /healthz answers 200.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const HOLD_MARKER = process.env.HOLD_MARKER || undefined;
const PACED = process.env.PACED_MARKER ? new RegExp(`${process.env.PACED_MARKER}:(\\d{1,5}):(\\d{1,5})`) : undefined;
const TOOL_CALL_MARKER = process.env.TOOL_CALL_MARKER || undefined;
const TOOL_CALL_NAME = process.env.TOOL_CALL_NAME || 'add';
const PIECES = ['Hello', ' from', ' the', ' fake', ' model.'];
const TEXT = PIECES.join('');
const USAGE = { prompt_tokens: 24, completion_tokens: PIECES.length, total_tokens: 24 + PIECES.length };

let counter = 0;
const chunk = (id: string, created: number, model: string, delta: object, finish: string | null, usage?: object) =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return json(res, 200, { status: 'ok' });
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    if (req.method !== 'POST' || !(req.url ?? '').endsWith('/chat/completions')) {
      return json(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
    }
    let body: {
      model?: string;
      stream?: boolean;
      messages?: { role?: string; content?: unknown }[];
      stream_options?: { include_usage?: boolean };
    };
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      return json(res, 400, { error: { message: 'the body is not JSON', type: 'invalid_request_error' } });
    }
    const id = `chatcmpl-bench-${++counter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? 'fake-model';
    const lastMessage = body.messages?.at(-1);
    if (
      !body.stream &&
      TOOL_CALL_MARKER !== undefined &&
      lastMessage?.role === 'user' &&
      typeof lastMessage.content === 'string' &&
      lastMessage.content.includes(TOOL_CALL_MARKER)
    ) {
      const call = { id: `call_${counter}`, type: 'function', function: { name: TOOL_CALL_NAME, arguments: '{"a":2,"b":3}' } };
      return json(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }],
        usage: USAGE,
      });
    }
    if (!body.stream) {
      return json(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }],
        usage: USAGE,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.socket?.setNoDelay(true);
    const last = body.messages?.at(-1)?.content;
    if (HOLD_MARKER !== undefined && typeof last === 'string' && last.includes(HOLD_MARKER)) {
      // The first piece, then nothing until the client leaves.
      res.write(chunk(id, created, model, { role: 'assistant', content: PIECES[0] }, null));
      return;
    }
    const paced = PACED && typeof last === 'string' ? PACED.exec(last) : null;
    if (paced) return pacedStream(res, (delta, finish) => chunk(id, created, model, delta, finish), Number(paced[1]), Number(paced[2]));
    let text = chunk(id, created, model, { role: 'assistant', content: '' }, null);
    for (const piece of PIECES) text += chunk(id, created, model, { content: piece }, null);
    text += chunk(id, created, model, {}, 'stop');
    if (body.stream_options?.include_usage) text += chunk(id, created, model, {}, null, USAGE);
    res.end(`${text}data: [DONE]\n\n`);
  });
});
server.keepAliveTimeout = 60_000;

/** `tokens` pieces of text, the k-th (from 0) due k ÷ `perSecond` s after the first; stops when the client leaves. */
function pacedStream(
  res: ServerResponse,
  chunkOf: (delta: object, finish: string | null) => string,
  tokens: number,
  perSecond: number,
): void {
  const started = performance.now();
  let sent = 0;
  const tick = () => {
    const due = Math.min(tokens, Math.floor(((performance.now() - started) * perSecond) / 1000) + 1);
    let text = '';
    for (; sent < due; sent++) text += chunkOf({ content: `${sent === 0 ? '' : ' '}t${sent + 1}` }, null);
    if (sent < tokens) return void (text && res.write(text));
    clearInterval(timer);
    res.end(`${text}${chunkOf({}, 'stop')}data: [DONE]\n\n`);
  };
  const timer = setInterval(tick, Math.max(1, Math.floor(1000 / perSecond)));
  res.on('close', () => clearInterval(timer));
  tick();
}

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` })}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
