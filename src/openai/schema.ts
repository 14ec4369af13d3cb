// The shapes of the OpenAI-compatible API under /v1: what its clients send (chat completions and
// responses requests, read as OpenAI reads them: unknown fields are ignored) and what they get back
// (models, completions, responses, their chunks and events), as the official SDKs expect them.
import * as v from 'valibot';
import { noArrays } from '../http/validate.js';
import { JsonObjectSchema } from '../http/validate.js';
import { Integer } from '../http/shapes.js';
import { MAX_INPUT_CHARS } from '../runs/schema.js';

/** Messages (or input items) one request may hold: the body limit bounds their size. */
export const MAX_MESSAGES = 1000;
/** Stop words a caller may add (as OpenAI allows). */
const MAX_STOP_WORDS = 4;

const Text = v.pipe(v.string('must be a string'), v.maxLength(MAX_INPUT_CHARS, `must be at most ${MAX_INPUT_CHARS} characters`));

/** A message's content: a string, or text parts (`text`, `input_text`, `output_text`) joined; anything else is refused. */
const ContentSchema = v.union(
  [
    Text,
    v.pipe(
      v.array(
        v.looseObject({
          type: v.picklist(['text', 'input_text', 'output_text'], 'only text parts are taken (text, input_text, output_text)'),
          text: Text,
        }),
        'must be a string or an array of text parts',
      ),
      v.maxLength(MAX_MESSAGES, `must hold at most ${MAX_MESSAGES} parts`),
      v.transform((parts) => parts.map((part) => part.text).join('')),
      v.maxLength(MAX_INPUT_CHARS, `must be at most ${MAX_INPUT_CHARS} characters in all`),
    ),
  ],
  'must be a string or an array of text parts',
);

const RoleSchema = v.picklist(
  ['system', 'developer', 'user', 'assistant'],
  "must be system, developer, user or assistant (tool results belong to the agent's own tools)",
);

/** One message of a conversation, as chat completions and responses input items both write it. */
const MessageSchema = v.pipe(
  v.looseObject({
    type: v.optional(v.literal('message', 'only message items are taken')),
    role: RoleSchema,
    content: ContentSchema,
  }),
  v.check(
    (message) => !('tool_calls' in message) || message.tool_calls === undefined,
    "must not hold tool_calls: the agent's own tools run on the service",
  ),
);
export type Message = v.InferOutput<typeof MessageSchema>;

const MessagesSchema = v.pipe(
  v.array(MessageSchema, 'must be an array of messages'),
  v.minLength(1, 'must hold at least one message'),
  v.maxLength(MAX_MESSAGES, `must hold at most ${MAX_MESSAGES} messages`),
);

/** The prompt's variables, as OpenAI's `metadata`: an object of strings (absent or null: none). */
const MetadataSchema = v.optional(
  v.pipe(
    v.nullable(
      v.pipe(
        JsonObjectSchema,
        v.check((values) => Object.values(values).every((value) => typeof value === 'string'), 'must be an object of strings'),
      ),
    ),
    // null (which OpenAI's API takes for "none") is no variables
    v.transform((values) => (values ?? {}) as Record<string, string>),
  ),
  {},
);

const ModelSchema = v.pipe(v.string('must be a string: the id of one of your agents'), v.minLength(1, 'must not be empty'));
const Tokens = v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'));

/** Sampling settings passed to the model as they are (null, as OpenAI's API takes it: not set). */
const samplingEntries = {
  temperature: v.optional(
    v.nullable(v.pipe(v.number('must be a number'), v.minValue(0, 'must be from 0 to 2'), v.maxValue(2, 'must be from 0 to 2'))),
  ),
  top_p: v.optional(
    v.nullable(v.pipe(v.number('must be a number'), v.minValue(0, 'must be from 0 to 1'), v.maxValue(1, 'must be from 0 to 1'))),
  ),
  seed: v.optional(v.nullable(v.pipe(v.number('must be a number'), v.integer('must be a whole number')))),
};

/** A request bringing tools of its own is refused: the agent's tools run on the service. */
const NoTools = v.optional(
  v.union(
    [v.null(), v.pipe(v.array(v.unknown()), v.length(0))],
    "are not taken: the agent's own tools run on the service; set them on the agent",
  ),
);

export const ChatCompletionRequestSchema = v.object({
  model: ModelSchema,
  messages: MessagesSchema,
  metadata: MetadataSchema,
  stream: v.optional(v.nullable(v.boolean('must be true or false')), false),
  stream_options: v.optional(v.nullable(noArrays(v.object({ include_usage: v.optional(v.nullable(v.boolean('must be true or false'))) })))),
  ...samplingEntries,
  max_tokens: v.optional(v.nullable(Tokens)),
  max_completion_tokens: v.optional(v.nullable(Tokens)),
  stop: v.optional(
    v.nullable(
      v.union(
        [
          v.pipe(
            v.string(),
            v.transform((word) => [word]),
          ),
          v.pipe(v.array(v.string()), v.maxLength(MAX_STOP_WORDS, `must hold at most ${MAX_STOP_WORDS} words`)),
        ],
        `must be a string or an array of at most ${MAX_STOP_WORDS} strings`,
      ),
    ),
  ),
  tools: NoTools,
  functions: NoTools,
});
export type ChatCompletionRequest = v.InferOutput<typeof ChatCompletionRequestSchema>;

export const ResponseRequestSchema = v.object({
  model: ModelSchema,
  input: v.union([v.pipe(Text, v.minLength(1, 'must not be empty')), MessagesSchema], 'must be a string or an array of message items'),
  instructions: v.optional(v.nullable(Text)),
  previous_response_id: v.optional(v.nullable(v.string('must be a string'))),
  store: v.optional(v.nullable(v.boolean('must be true or false')), true),
  metadata: MetadataSchema,
  stream: v.optional(v.nullable(v.boolean('must be true or false')), false),
  background: v.optional(v.nullable(v.boolean('must be true or false')), false),
  ...samplingEntries,
  max_output_tokens: v.optional(v.nullable(Tokens)),
  tools: NoTools,
});
export type ResponseRequest = v.InferOutput<typeof ResponseRequestSchema>;

/** GET /v1/responses/{id}: `stream=true` streams a background response's events again, after `starting_after`. */
export const ResponseQuerySchema = v.object({
  stream: v.optional(v.picklist(['true', 'false'], 'must be true or false')),
  /** Taken and ignored: the service adds no obfuscation to its events. */
  include_obfuscation: v.optional(v.picklist(['true', 'false'], 'must be true or false')),
  /** Taken and ignored, as in a create's body (the official SDK sends `include[]=…`): there is nothing more to include. */
  include: v.optional(v.union([v.string(), v.array(v.string())])),
  'include[]': v.optional(v.union([v.string(), v.array(v.string())])),
  starting_after: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,15}$/, 'must be the sequence_number of an event (0 or more)'),
      v.transform((text) => Number(text)),
    ),
  ),
});

// ---- Answers ----------------------------------------------------------------------------------------

export const ModelObjectSchema = v.strictObject({
  id: v.pipe(v.string(), v.description("The agent's id.")),
  object: v.literal('model'),
  created: v.pipe(Integer, v.description('When the agent was created, in Unix seconds.')),
  owned_by: v.literal('agent-service'),
});
export type ModelObject = v.InferOutput<typeof ModelObjectSchema>;

export const ModelListSchema = v.strictObject({ object: v.literal('list'), data: v.array(ModelObjectSchema) });

const ChatUsageSchema = v.strictObject({ prompt_tokens: Integer, completion_tokens: Integer, total_tokens: Integer });

export const ChatCompletionSchema = v.strictObject({
  id: v.pipe(v.string(), v.description('`chatcmpl-` and the id of the run (GET /api/v1/runs/{id}).')),
  object: v.literal('chat.completion'),
  created: Integer,
  model: v.string(),
  choices: v.array(
    v.strictObject({
      index: Integer,
      message: v.strictObject({ role: v.literal('assistant'), content: v.string(), refusal: v.null() }),
      finish_reason: v.literal('stop'),
      logprobs: v.null(),
    }),
  ),
  usage: ChatUsageSchema,
});
export type ChatCompletion = v.InferOutput<typeof ChatCompletionSchema>;

const OutputTextSchema = v.strictObject({ type: v.literal('output_text'), text: v.string(), annotations: v.array(v.unknown()) });

export const ResponseObjectSchema = v.strictObject({
  id: v.pipe(v.string(), v.description('`resp_` and the id of the run (GET /api/v1/runs/{id}).')),
  object: v.literal('response'),
  created_at: Integer,
  status: v.picklist(['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete']),
  model: v.string(),
  output: v.array(
    v.strictObject({
      id: v.string(),
      type: v.literal('message'),
      role: v.literal('assistant'),
      status: v.picklist(['in_progress', 'completed']),
      content: v.array(OutputTextSchema),
    }),
  ),
  output_text: v.string(),
  usage: v.nullable(v.strictObject({ input_tokens: Integer, output_tokens: Integer, total_tokens: Integer })),
  error: v.nullable(v.strictObject({ code: v.string(), message: v.string() })),
  incomplete_details: v.pipe(
    v.nullable(v.strictObject({ reason: v.literal('requires_action') })),
    v.description(
      '`{ reason: "requires_action" }` while the response (status `incomplete`) waits for tool calls to be approved: answer them with POST /api/v1/runs/{id}/actions (the run id is the response id without `resp_`); null otherwise.',
    ),
  ),
  instructions: v.nullable(v.string()),
  metadata: v.record(v.string(), v.string()),
  previous_response_id: v.nullable(v.string()),
  store: v.boolean(),
  temperature: v.nullable(v.number()),
  top_p: v.nullable(v.number()),
  max_output_tokens: v.nullable(Integer),
  parallel_tool_calls: v.boolean(),
  tool_choice: v.literal('auto'),
  tools: v.array(v.unknown()),
});
export type ResponseObject = v.InferOutput<typeof ResponseObjectSchema>;

export const DeletedResponseSchema = v.strictObject({ id: v.string(), object: v.literal('response'), deleted: v.literal(true) });

/** The OpenAI-shaped error body every /v1 failure answers. */
export const OpenAIErrorSchema = v.strictObject({
  error: v.strictObject({ message: v.string(), type: v.string(), param: v.nullable(v.string()), code: v.nullable(v.string()) }),
});

export const CHAT_CHUNK_EVENTS = {
  '(unnamed)':
    '`chat.completion.chunk` objects (the first with the role, then one per piece of the answer, then one with `finish_reason`, then, with `stream_options.include_usage`, one with `usage`), then `[DONE]`; a failure after the stream began is `{ error: { message, type, code } }` (`invalid_api_key` when the API token stops working), then `[DONE]`.',
};

export const RESPONSE_EVENTS = {
  'response.created': 'the response, `in_progress`; every event carries `type` and `sequence_number` (0, 1, 2, …).',
  'response.in_progress': 'the response, `in_progress`.',
  'response.output_item.added': 'the message item, `in_progress`.',
  'response.content_part.added': 'its `output_text` part, empty.',
  'response.output_text.delta': '`delta`: a piece of the answer.',
  'response.output_text.done': '`text`: the whole answer.',
  'response.content_part.done': 'the part, whole.',
  'response.output_item.done': 'the message item, `completed`.',
  'response.completed': 'the response, `completed`, with `usage`; last.',
  'response.failed': 'the response, `failed`, with `error { code, message }`; last.',
  error:
    '`{ code: "invalid_api_key", message, param }`: the API token stopped working (revoked, expired, its account deleted or disabled); last. A background response goes on.',
};
