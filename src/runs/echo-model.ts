// The built-in `echo` model: a stand-in for a model server, answered inside the service (nothing is
// sent anywhere), so the service can be tried, and agents run in integration tests, without one.
// It is a ChatApi like the one that calls real servers: its completions and chunks go through the
// same model call (src/runs/model-call.ts), so memory, documents, tools, run records, streaming and
// the v0 endpoints behave as they do with a real model. What it answers:
// - the user's input, as is (streamed a word at a time);
// - when the run offers tools, each input line `/tool <function> <JSON arguments>` is a call of that
//   function: a VENDOR_A agent gets them all as native tool calls in one reply, a REACT agent one
//   `Action:` per reply (it is asked for ReAct text when `\nObservation:` is a stop sequence); once
//   every call has come back it answers with their results, one per line;
// - usage: an estimate, about four characters a token.
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { OBSERVATION } from './react.js';
import type { ChatApi, ChatParams } from './chat-api.js';

/** A call the input asks for with a `/tool` line. */
interface EchoToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One reply: text, or tool calls (native tool calling). */
interface EchoReply {
  content: string;
  toolCalls: EchoToolCall[];
}

const TOOL_LINE = '/tool ';

/** The text of a message (content parts joined; none: ''). */
function textOf(message: ChatCompletionMessageParam | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

/** The `/tool <function> <arguments>` lines of the input, in order (arguments `{}` when none are given). */
function toolLines(input: string): EchoToolCall[] {
  const calls: EchoToolCall[] = [];
  for (const raw of input.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith(TOOL_LINE)) continue;
    const rest = line.slice(TOOL_LINE.length).trim();
    const space = rest.search(/\s/);
    const name = space === -1 ? rest : rest.slice(0, space);
    if (name === '') continue;
    const args = space === -1 ? '' : rest.slice(space).trim();
    calls.push({ id: `echo_call_${calls.length + 1}`, name, arguments: args === '' ? '{}' : args });
  }
  return calls;
}

/** Native tool calling: the input and the tool results since it (undefined: no call was made yet). */
function nativeTurn(messages: ChatCompletionMessageParam[]): { input: string; results: string[] | undefined } {
  let at = messages.length - 1;
  const results: string[] = [];
  let called = false;
  for (; at >= 0; at -= 1) {
    const message = messages[at];
    if (message.role === 'tool') results.unshift(textOf(message));
    else if (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0) called = true;
    else break;
  }
  return { input: textOf(messages[at]), results: called ? results : undefined };
}

/** The ReAct loop: the input and the observations since it (each `Observation: …\nThought:` the loop added). */
function reactTurn(messages: ChatCompletionMessageParam[]): { input: string; observations: string[] } {
  let at = messages.length - 1;
  const observations: string[] = [];
  while (at >= 1 && messages[at].role === 'user' && messages[at - 1].role === 'assistant') {
    const text = textOf(messages[at]);
    if (!text.startsWith('Observation:')) break;
    observations.unshift(
      text
        .slice('Observation:'.length)
        .replace(/\n?Thought:\s*$/, '')
        .trim(),
    );
    at -= 2;
  }
  return { input: textOf(messages[at]), observations };
}

/** What the echo model answers to one call. */
function reply(params: ChatParams): EchoReply {
  const messages = params.messages;
  const offersTools = (params.tools?.length ?? 0) > 0;
  const stops = typeof params.stop === 'string' ? [params.stop] : (params.stop ?? []);
  if (stops.includes(OBSERVATION)) {
    const { input, observations } = reactTurn(messages);
    const calls = toolLines(input);
    const next = calls[observations.length];
    if (next)
      return { content: `Thought: the input asks for ${next.name}.\nAction: ${next.name}\nAction Input: ${next.arguments}`, toolCalls: [] };
    const answer = calls.length > 0 ? observations.join('\n') : input;
    return { content: cutAtStop(`Thought: I now know the final answer\nFinal Answer: ${answer}`, stops), toolCalls: [] };
  }
  const { input, results } = nativeTurn(messages);
  if (results !== undefined) return { content: results.join('\n'), toolCalls: [] };
  const calls = offersTools ? toolLines(input) : [];
  if (calls.length > 0) return { content: '', toolCalls: calls };
  return { content: cutAtStop(input, stops), toolCalls: [] };
}

/** `text` up to the first stop sequence, as a model server ends its answer there. */
function cutAtStop(text: string, stops: string[]): string {
  let end = text.length;
  for (const stop of stops) {
    const at = stop === '' ? -1 : text.indexOf(stop);
    if (at !== -1 && at < end) end = at;
  }
  return text.slice(0, end);
}

/** About four characters a token (the usual figure for English text). */
const tokens = (characters: number) => Math.ceil(characters / 4);

function usageOf(params: ChatParams, answer: EchoReply) {
  let prompt = 0;
  for (const message of params.messages) {
    prompt += textOf(message).length;
    if (message.role === 'assistant')
      for (const call of message.tool_calls ?? [])
        prompt += call.type === 'function' ? call.function.name.length + call.function.arguments.length : 0;
  }
  if (params.tools) prompt += JSON.stringify(params.tools).length;
  const completion = answer.content.length + answer.toolCalls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0);
  const usage = { prompt_tokens: tokens(prompt), completion_tokens: Math.max(1, tokens(completion)) };
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

/** The text in pieces of one word and the white space after it (joined, they are the text again). */
function words(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\s)(?=\S)/);
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The echo model as a ChatApi (the endpoint is not used: nothing is sent). */
export const echoChatApi: ChatApi = {
  async complete(endpoint, params, signal) {
    if (signal.aborted) throw signal.reason;
    const answer = reply(params);
    const completion: ChatCompletion = {
      id: 'echo',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: endpoint.model,
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: answer.toolCalls.length > 0 ? 'tool_calls' : 'stop',
          message: {
            role: 'assistant',
            content: answer.content,
            refusal: null,
            ...(answer.toolCalls.length > 0
              ? {
                  tool_calls: answer.toolCalls.map((call) => ({
                    id: call.id,
                    type: 'function' as const,
                    function: { name: call.name, arguments: call.arguments },
                  })),
                }
              : {}),
          },
        },
      ],
      usage: usageOf(params, answer),
    };
    return completion;
  },

  async stream(endpoint, params, signal, onChunk) {
    const answer = reply(params);
    const created = Math.floor(Date.now() / 1000);
    const chunk = (
      delta: ChatCompletionChunk.Choice.Delta,
      finish: ChatCompletionChunk.Choice['finish_reason'] = null,
    ): ChatCompletionChunk => ({
      id: 'echo',
      object: 'chat.completion.chunk',
      created,
      model: endpoint.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    // Each piece is its own turn of the event loop, as it would be when it came from a server.
    for (const piece of words(answer.content)) {
      await nextTurn();
      if (signal.aborted) throw signal.reason;
      onChunk(chunk({ content: piece }));
    }
    for (const [index, call] of answer.toolCalls.entries()) {
      await nextTurn();
      if (signal.aborted) throw signal.reason;
      onChunk(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
      onChunk(chunk({ tool_calls: [{ index, function: { arguments: call.arguments } }] }));
    }
    await nextTurn();
    if (signal.aborted) throw signal.reason;
    onChunk(chunk({}, answer.toolCalls.length > 0 ? 'tool_calls' : 'stop'));
    onChunk({ id: 'echo', object: 'chat.completion.chunk', created, model: endpoint.model, choices: [], usage: usageOf(params, answer) });
  },
};
