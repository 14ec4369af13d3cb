// A run's events (src/runs/events.ts) as the OpenAI streams say them: chat completion chunks ending
// in `data: [DONE]`, or the Responses API's semantic events, each numbered by `sequence_number`.
// Tool calls, their results and the document excerpts stay the service's: the client sees the
// answer being written (the run records the rest, GET /api/v1/runs/{id}).
import { formatEvent, type SseStream } from '../http/sse.js';
import type { RunEvent, RunEventListener } from '../runs/events.js';
import type { LogWriter } from '../runs/follow.js';
import { waitingMessage } from '../runs/failures.js';
import { streamError } from './errors.js';
import { chatUsage, messageIdOf, messageItem, outputText, presentResponse, type ResponseSettings, type ResponseState } from './present.js';

const DONE = formatEvent(undefined, '[DONE]');

/** The error of a stream whose API token stopped working, as OpenAI words a refused key. */
const keyRefused = (message: string) => ({ message, type: 'invalid_request_error', code: 'invalid_api_key' });

export interface ChatStreamOptions {
  id: string;
  created: number;
  model: string;
  /** `stream_options.include_usage`: every chunk has `usage: null`, and a last chunk holds it. */
  includeUsage: boolean;
}

/** A streamed chat completion: unnamed `data:` chunks, `[DONE]` last (after an error object when the run failed). */
export const chatChunks =
  ({ id, created, model, includeUsage }: ChatStreamOptions) =>
  (sse: SseStream): RunEventListener => {
    // Every chunk is the same but for its delta: written once, so a token costs one JSON string.
    const head = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":`;
    const tail = (finish: string | null) =>
      `,"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]${includeUsage ? ',"usage":null' : ''}}`;
    const open = tail(null);
    // A token that stops working ends the stream as an invalid key is answered: an error object, then `[DONE]`.
    sse.sayRefusal((message) => [formatEvent(undefined, JSON.stringify({ error: keyRefused(message) })), DONE]);
    return (event) => {
      switch (event.name) {
        case 'run':
          sse.text(`${head}{"role":"assistant","content":""}${open}`);
          return;
        case 'token':
          sse.text(`${head}{"content":${JSON.stringify(event.data.text)}}${open}`);
          return;
        case 'done': {
          const last = [formatEvent(undefined, `${head}{}${tail('stop')}`)];
          if (includeUsage) {
            const usage = JSON.stringify(chatUsage(event.data.usage));
            last.push(
              formatEvent(
                undefined,
                `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[],"usage":${usage}}`,
              ),
            );
          }
          sse.end(...last, DONE);
          return;
        }
        case 'error':
          sse.end(formatEvent(undefined, JSON.stringify({ error: streamError(event.data.code, event.data.message) })), DONE);
          return;
        case 'requires_action': {
          // A chat completion has no way to say "waiting": the run's calls are answered through our API.
          const error = {
            message: waitingMessage(event.data.runId, event.data.actions.length),
            type: 'invalid_request_error',
            code: 'requires_action',
          };
          sse.end(formatEvent(undefined, JSON.stringify({ error })), DONE);
          return;
        }
        default:
          return;
      }
    };
  };

/**
 * A streamed response: its semantic events, named by their `type`, numbered from 0. Those numbered
 * up to `startingAfter` are counted but not sent (a resumed stream: the numbers come from replaying
 * the run's events from the start, so they are the same on every replay). A run that waits for
 * approval ends the stream `incomplete`.
 */
export const responseEvents =
  (start: Omit<ResponseState, 'status' | 'output' | 'usage' | 'error'>, settings: ResponseSettings, startingAfter = -1) =>
  (sse: SseStream): ((event: RunEvent, passedWait?: boolean) => void) => {
    let sequence = 0;
    let opened = false;
    /** The next event, formatted; undefined when it was already sent before (the client resumes after it). */
    const format = (type: string, fields: object) => {
      const number = sequence++;
      if (number <= startingAfter) return undefined;
      return formatEvent(type, JSON.stringify(Object.assign({ type, sequence_number: number }, fields)));
    };
    const send = (type: string, fields: object) => {
      const text = format(type, fields);
      if (text !== undefined) sse.send(text);
    };
    const end = (...texts: (string | undefined)[]) => sse.end(...texts.filter((text) => text !== undefined));
    const at = { item_id: messageIdOf(start.runId), output_index: 0, content_index: 0 };
    // Every delta is the same but for its number and text: written once, so a token costs one JSON
    // string and no object (JSON holds no line break, so the event is one `data:` line).
    const deltaHead = `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":`;
    const deltaAt = `,"item_id":${JSON.stringify(at.item_id)},"output_index":0,"content_index":0,"delta":`;
    const delta = (text: string) => {
      const number = sequence++;
      if (number > startingAfter) sse.send(`${deltaHead}${number}${deltaAt}${JSON.stringify(text)},"logprobs":[]}\n\n`);
    };
    const underWay = (status: 'in_progress' | 'incomplete') =>
      presentResponse({ ...start, status, output: null, usage: null, error: null }, settings);
    // A token that stops working ends the stream with an `error` event (the response itself goes on
    // when it is a background one, so it is not said to have failed).
    sse.sayRefusal((message) => [format('error', { code: 'invalid_api_key', message, param: null })].filter((text) => text !== undefined));
    // `passedWait`: the event is a `requires_action` the run went on from (read again from its log).
    return (event, passedWait = false) => {
      switch (event.name) {
        case 'run': {
          // Once per response, should its run be announced again (it goes on after an approval).
          if (opened) return;
          opened = true;
          const response = underWay('in_progress');
          send('response.created', { response });
          send('response.in_progress', { response });
          send('response.output_item.added', { output_index: 0, item: messageItem(start.runId, null) });
          send('response.content_part.added', { ...at, part: outputText('') });
          return;
        }
        case 'token':
          delta(event.data.text);
          return;
        case 'done': {
          const text = event.data.output;
          const completed = presentResponse(
            { ...start, status: 'completed', output: text, usage: event.data.usage, error: null },
            settings,
          );
          end(
            format('response.output_text.done', { ...at, text, logprobs: [] }),
            format('response.content_part.done', { ...at, part: outputText(text) }),
            format('response.output_item.done', { output_index: 0, item: messageItem(start.runId, text) }),
            format('response.completed', { response: completed }),
          );
          return;
        }
        case 'error': {
          const { code, message } = event.data;
          // The codes of OpenAI's response errors: what went wrong is in the message (and the run).
          const error = { code: code === 'rate_limited' ? 'rate_limit_exceeded' : 'server_error', message };
          end(
            format('response.failed', {
              response: presentResponse(
                { ...start, status: code === 'cancelled' ? 'cancelled' : 'failed', output: null, usage: null, error },
                settings,
              ),
            }),
          );
          return;
        }
        case 'requires_action':
          // A wait the run went on from still takes up the number its `response.incomplete` had
          // when it ended a stream: the events after it keep theirs.
          if (passedWait) sequence++;
          else end(format('response.incomplete', { response: underWay('incomplete') }));
          return;
        default:
          return;
      }
    };
  };

/** The run events a response's stream says; the rest (tool calls, their results, sources) it passes over unread. */
const SAID = new Set(['run', 'token', 'done', 'error', 'requires_action']);

/**
 * A background response's stream, said from its run's event log (src/runs/follow.ts): the log's
 * events replayed from the start through `responseEvents`, so every event's `sequence_number` is the
 * same however often the stream is read, and only those after `startingAfter` are sent.
 */
export const responseLogWriter =
  (start: Omit<ResponseState, 'status' | 'output' | 'usage' | 'error'>, settings: ResponseSettings, startingAfter: number): LogWriter =>
  (sse) => {
    const listener = responseEvents(start, settings, startingAfter)(sse);
    return (event, ends) => {
      // A wait the run went on from (its calls were answered) is passed over: the response goes on.
      const passedWait = event.name === 'requires_action' && !ends;
      if (SAID.has(event.name)) listener({ name: event.name, data: JSON.parse(event.data) } as RunEvent, passedWait);
    };
  };
