// The shapes of running agents: invoke and predict bodies, runs, sessions and their messages.
import * as v from 'valibot';
import { JsonObjectSchema } from '../http/validate.js';
import { Id, Integer, NullTimestamp, Timestamp } from '../http/shapes.js';

export const MAX_INPUT_CHARS = 100_000;
/** Characters of a run's `input` and `output` a list holds (the whole record: GET /runs/{id}). */
export const LIST_TEXT_CHARS = 1000;
/** Steps of a run a list holds, and characters of each step's `input`, `output` and `error`. */
export const LIST_STEPS = 10;
export const LIST_STEP_CHARS = 200;
/** How much of a session's first message its `title` shows. */
export const SESSION_TITLE_CHARS = 100;

export const InputSchema = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_INPUT_CHARS, `must be at most ${MAX_INPUT_CHARS} characters`),
);

/** A session id as a client names it: 1-200 characters, no control characters. */
export const SessionIdSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(200, 'must be at most 200 characters'),
  v.regex(/^[^\p{Cc}]*$/u, 'must not hold control characters'),
);

const VariablesSchema = v.pipe(
  JsonObjectSchema,
  v.check((values) => Object.values(values).every((value) => typeof value === 'string'), 'must be an object of strings'),
  v.transform((values) => values as Record<string, string>),
);

/** A tool call waiting for approval. */
export const PendingActionSchema = v.strictObject({
  id: v.pipe(v.string(), v.description('The call to answer in POST /runs/{id}/actions.')),
  tool: v.pipe(v.string(), v.description("The tool's name.")),
  function: v.pipe(v.string(), v.description('The function the model called.')),
  input: v.pipe(v.unknown(), v.description('The arguments the model gave.')),
  runId: v.pipe(
    v.optional(Id),
    v.description("Set when the call is a nested agent's (an AGENT tool's run, which waits with this one): that run."),
  ),
  agentId: v.pipe(v.optional(Id), v.description('The agent of that nested run.')),
});

export const InvokeSchema = v.object({
  input: InputSchema,
  /** Values of the agent prompt's input variables. */
  variables: v.optional(VariablesSchema, {}),
  sessionId: v.optional(v.nullable(SessionIdSchema), null),
  stream: v.optional(v.boolean('must be true or false'), false),
  background: v.pipe(
    v.optional(v.boolean('must be true or false'), false),
    v.description(
      "Run without waiting for the answer: 202 `{ runId, sessionId, status }` at once (with `stream: true`, the run's event stream, as GET /runs/{id}/events sends it); the run goes on when the client goes away.",
    ),
  ),
});

/** What a background invoke answers at once (202). */
export const RunAcceptedSchema = v.strictObject({
  runId: Id,
  sessionId: v.nullable(v.string()),
  status: v.pipe(
    v.picklist(['queued', 'running', 'requires_action']),
    v.description("`queued` while it waits for one of the user's RUN_CONCURRENCY_PER_USER slots."),
  ),
  actions: v.optional(v.array(PendingActionSchema)),
});

/** Body of POST /runs/{id}/actions: an answer to every call the run waits for. */
export const ActionsBodySchema = v.object({
  actions: v.pipe(
    v.array(
      v.object({
        id: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters')),
        approve: v.pipe(
          v.boolean('must be true or false'),
          v.description('true: the call is made; false: the model is told the user denied it.'),
        ),
        reason: v.pipe(
          v.optional(v.pipe(v.string('must be a string'), v.maxLength(2000, 'must be at most 2000 characters'))),
          v.description('Told to the model with a denial.'),
        ),
      }),
      'must be an array of { id, approve, reason? }',
    ),
    v.minLength(1, 'must answer at least one call'),
    v.maxLength(1000, 'must hold at most 1000 answers'),
  ),
});

/** What POST /runs/{id}/actions answers (202). */
export const ActionsAcceptedSchema = v.strictObject({
  runId: Id,
  status: v.pipe(
    v.picklist(['running', 'queued']),
    v.description(
      "`running`: the run goes on; `queued`: it goes on as soon as one of the user's slots is free, before the user's other queued runs.",
    ),
  ),
});

/** `?after=` of GET /runs/{id}/events: the number of the last event the client has. */
export const EventsQuerySchema = v.object({
  after: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,15}$/, 'must be the number of an event (0 or more)'),
      v.transform((text) => Number(text)),
    ),
  ),
});

/** The events of a run's log, as GET /runs/{id}/events describes them. */
export const LOG_EVENTS = {
  '(every event)': '`id: <n>`, numbered 1, 2, 3 … within the run (tokens may be merged into fewer events).',
  run: '`{ runId, sessionId }`, first.',
  token: "`{ text }`: a piece of the answer; the texts of a whole log joined are the run's output.",
  tool_call: '`{ id, tool, function, input }`.',
  tool_result: '`{ id, output }` or `{ id, error }`.',
  sources: 'the document excerpts given to the model.',
  requires_action:
    '`{ runId, actions }`: tool calls wait for approval; the stream ends, and the log goes on after it once they are answered.',
  done: 'the answer (as a plain invoke answers it), last.',
  error:
    "`{ code, message }` (codes as a streamed invoke's, plus `cancelled`, `interrupted`, `approval_expired`), last. " +
    'Also, without `id:` and not in the log, `unauthorized` when the API token the stream was opened with stops working (revoked, expired, its account deleted or disabled): the stream ends, the run goes on.',
};

/** The original API's predict body: `{ input: { input, ...variables }, has_streaming | hasStreaming, session }`. */
export const PredictSchema = v.object({
  input: v.pipe(
    JsonObjectSchema,
    v.check(
      (values) => typeof values.input === 'string' && values.input.length > 0 && values.input.length <= MAX_INPUT_CHARS,
      `must hold "input": a string of 1 to ${MAX_INPUT_CHARS} characters`,
    ),
    v.check(
      (values) => Object.values(values).every((value) => ['string', 'number', 'boolean'].includes(typeof value)),
      'must be an object of strings (numbers and booleans are read as text)',
    ),
    v.transform((values) => {
      const { input, ...variables } = values;
      return {
        input: input as string,
        variables: Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, String(value)])),
      };
    }),
  ),
  has_streaming: v.optional(v.boolean('must be true or false')),
  hasStreaming: v.optional(v.boolean('must be true or false')),
  session: v.optional(v.nullable(SessionIdSchema), null),
});

export const StepSchema = v.object({
  tool: v.pipe(v.string(), v.description("The tool's name.")),
  toolId: Id,
  function: v.pipe(v.string(), v.description('The function the model called.')),
  input: v.pipe(v.unknown(), v.description('The arguments the model gave (the text as written when not JSON).')),
  output: v.optional(v.string()),
  error: v.pipe(v.optional(v.string()), v.description('Set instead of output when the call failed; the model was told.')),
  ms: Integer,
});

export const SourceSchema = v.strictObject({
  documentId: Id,
  documentName: v.string(),
  chunkId: Id,
  position: v.pipe(Integer, v.description('0-based order of the chunk in its document.')),
  snippet: v.pipe(v.string(), v.description('Plain text around the matched words.')),
});

const UsageSchema = v.pipe(
  v.nullable(v.strictObject({ promptTokens: Integer, completionTokens: Integer })),
  v.description('Tokens the model reported, summed over the run; null when it reported none.'),
);

const WarningsSchema = v.pipe(v.array(v.string()), v.description('Why something was left out (a tool not offered, say); empty when none.'));

/** What invoke answers (and the `done` event carries). */
export const RunResultSchema = v.strictObject({
  runId: Id,
  sessionId: v.pipe(
    v.nullable(v.string()),
    v.description('The session remembered (new when none was given); null for an agent without memory unless one was given.'),
  ),
  output: v.string(),
  model: v.string(),
  steps: v.array(StepSchema),
  sources: v.array(SourceSchema),
  warnings: WarningsSchema,
  usage: UsageSchema,
  ms: Integer,
});

export const RUN_STATUSES = ['queued', 'running', 'requires_action', 'succeeded', 'failed', 'cancelled'] as const;

export const RunSchema = v.strictObject({
  id: Id,
  agentId: Id,
  parentRunId: v.pipe(v.nullable(Id), v.description('The run whose tool ran this agent; null for a run a client started.')),
  sessionId: v.nullable(v.string()),
  status: v.pipe(
    v.picklist(RUN_STATUSES),
    v.description(
      '`queued` (a background run waiting for a slot), `running`, `requires_action` (tool calls wait for approval: `actions`), then `succeeded`, `failed` or `cancelled`.',
    ),
  ),
  background: v.pipe(v.boolean(), v.description('The run goes on without its client (`background: true`).')),
  input: v.string(),
  output: v.nullable(v.string()),
  error: v.pipe(v.nullable(v.string()), v.description('Why the run failed or was cancelled, in words.')),
  model: v.string(),
  steps: v.array(StepSchema),
  sources: v.array(SourceSchema),
  warnings: WarningsSchema,
  usage: UsageSchema,
  actions: v.pipe(v.array(PendingActionSchema), v.description('The tool calls waiting for approval; empty unless `requires_action`.')),
  startedAt: Timestamp,
  finishedAt: NullTimestamp,
  ms: v.nullable(Integer),
});
export type RunShape = v.InferOutput<typeof RunSchema>;

/** A run in a list (of an agent's runs, or traces): the record with its long parts cut. */
export const RunListItemSchema = v.strictObject({
  ...RunSchema.entries,
  truncated: v.pipe(
    v.boolean(),
    v.description(
      `True when this list item is cut: \`input\` and \`output\` hold at most ${LIST_TEXT_CHARS} characters (a cut one ends in …), ` +
        `\`steps\` the first ${LIST_STEPS}, each step's \`input\`, \`output\` and \`error\` at most ${LIST_STEP_CHARS} ` +
        '(a cut `input` is the beginning of its JSON text, as a string). GET /runs/{id} has the whole run.',
    ),
  ),
});
export type RunListItemShape = v.InferOutput<typeof RunListItemSchema>;

export const SessionSchema = v.strictObject({
  id: v.string(),
  agentId: Id,
  title: v.pipe(
    v.nullable(v.string()),
    v.description(`The first ${SESSION_TITLE_CHARS} characters of the session's first message, to name it by; null while it has none.`),
  ),
  messages: v.pipe(Integer, v.description('How many messages the session holds.')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const MessageSchema = v.strictObject({
  id: Id,
  role: v.picklist(['user', 'assistant']),
  content: v.string(),
  runId: v.nullable(Id),
  createdAt: Timestamp,
});

/** The named events of a streamed invoke, as the OpenAPI document describes them. */
export const INVOKE_EVENTS = {
  run: '`{ runId, sessionId }`, first.',
  token: '`{ text }`: a piece of the answer as the model writes it.',
  tool_call: '`{ id, tool, function, input }`: the model called a tool.',
  tool_result: '`{ id, output }` or `{ id, error }`: what the tool answered.',
  sources: '`[{ documentId, documentName, chunkId, position, snippet }]`: the document excerpts given to the model.',
  done: 'the non-streamed answer (`runId, sessionId, output, model, steps, sources, warnings, usage, ms`), last.',
  error:
    '`{ code, message }` (upstream_error, upstream_timeout, max_steps, unavailable, cancelled; `unauthorized` when the API token stops working, ' +
    'revoked, expired, its account deleted or disabled: the run is cancelled, a background run goes on), last.',
  requires_action: '`{ runId, actions }`: tool calls wait for approval (POST /runs/{id}/actions), last.',
};
