// The conversation of a run in the service's own words. The engine, the strategies and the tools
// speak these shapes; only the model call (model-call.ts) turns them into the wire format of the
// model's API, and its answers back, so another API (or a model answered inside the service) plugs
// in there without the loop knowing.

/** A tool call as the model asked for it (arguments as the model wrote them). */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

/** One message of the conversation a run holds with its model. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  /** An answer of the model; `toolCalls` when it asked for tools (then `content` may be ''). */
  | { role: 'assistant'; content: string; toolCalls?: ToolCallRequest[] }
  /** The result of one tool call, answering the call `toolCallId`. */
  | { role: 'tool'; toolCallId: string; content: string };

/** A turn a caller gives a run as the conversation before its input. */
export interface PriorMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** A function offered to the model: its name, what it does, and the JSON Schema of its arguments. */
export interface FunctionSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** One model reply: its text and the tool calls it asks for. */
export interface ModelReply {
  content: string;
  toolCalls: ToolCallRequest[];
}
