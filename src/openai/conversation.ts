// What an OpenAI request asks of a run: its messages (or input items) as the run's input, the
// conversation before it and the caller's instructions; its sampling settings as the model takes them.
import type { PriorMessage } from '../runs/messages.js';
import type { Sampling } from '../runs/run.js';
import { badRequest } from './errors.js';
import type { Message } from './schema.js';

/** A conversation in OpenAI's messages as a run takes it: the last (user) message is the input. */
export interface Conversation {
  input: string;
  messages: PriorMessage[];
  /** The system and developer messages, in order: added after the agent's prompt. */
  instructions: string[];
}

export function conversationOf(items: Message[], param: string): Conversation {
  const last = items[items.length - 1];
  if (last.role !== 'user' || last.content === '') {
    throw badRequest(param, `The last item of ${param} must be a user message with text: it is what the agent answers.`);
  }
  const messages: PriorMessage[] = [];
  const instructions: string[] = [];
  for (const item of items.slice(0, -1)) {
    if (item.role === 'system' || item.role === 'developer') instructions.push(item.content);
    else messages.push({ role: item.role, content: item.content });
  }
  return { input: last.content, messages, instructions };
}

/** The settings of `body` that are given, as the model takes them. */
export function samplingOf(body: Record<string, unknown>, names: readonly string[]): Sampling {
  const sampling: Record<string, unknown> = {};
  for (const name of names) if (body[name] !== undefined && body[name] !== null) sampling[name] = body[name];
  return sampling as Sampling;
}
