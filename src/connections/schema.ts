// The shapes of `/connections`: request bodies, the connection as answered, its model list and the
// answer of a connection test.
import * as v from 'valibot';
import { httpUrlSchema, NameSchema } from '../http/validate.js';
import { Id, Timestamp } from '../http/shapes.js';
import { ApiKeySchema, normalizeProvider } from '../agents/llm.js';

/** The providers a connection may name: each is a server with an OpenAI-compatible API (`echo` needs none). */
export const CONNECTION_PROVIDERS = ['openai', 'ollama', 'openai-compatible'] as const;
export type ConnectionProvider = (typeof CONNECTION_PROVIDERS)[number];

const ProviderSchema = v.pipe(
  v.string('must be a string'),
  v.transform((name) => normalizeProvider(name)),
  v.picklist(CONNECTION_PROVIDERS, `must be one of ${CONNECTION_PROVIDERS.join(', ')}`),
  v.description(`One of ${CONNECTION_PROVIDERS.map((name) => `\`${name}\``).join(', ')} (any case; \`openai-chat\` is \`openai\`).`),
);

const BaseUrlSchema = v.pipe(
  httpUrlSchema('put the key in apiKey'),
  v.description('The OpenAI-compatible API of the server, e.g. `http://host:11434/v1` (its models are at `{baseUrl}/models`).'),
);
const KeySchema = v.pipe(ApiKeySchema, v.description('Sent as `Authorization: Bearer …` to the server; stored sealed, never returned.'));

export const CreateConnectionSchema = v.object({
  name: NameSchema,
  provider: ProviderSchema,
  baseUrl: BaseUrlSchema,
  apiKey: v.optional(KeySchema, null),
});
export const UpdateConnectionSchema = v.object({
  name: v.optional(NameSchema),
  provider: v.optional(ProviderSchema),
  baseUrl: v.optional(BaseUrlSchema),
  apiKey: v.optional(KeySchema),
});
export type ConnectionInput = v.InferOutput<typeof CreateConnectionSchema>;
export type ConnectionChange = v.InferOutput<typeof UpdateConnectionSchema>;

export const ConnectionSchema = v.strictObject({
  id: v.pipe(v.string(), v.description('An opaque id; the built-in connections have the fixed ids `builtin-openai` and `builtin-ollama`.')),
  userId: v.pipe(v.nullable(Id), v.description('The owner; null for a built-in connection.')),
  name: v.string(),
  provider: v.picklist(CONNECTION_PROVIDERS),
  baseUrl: v.pipe(
    v.nullable(v.string()),
    v.description("The server; null for a built-in connection (the operator's server is not shown)."),
  ),
  hasApiKey: v.pipe(v.boolean(), v.description('Whether a key is stored for the server (it is never returned).')),
  builtIn: v.pipe(
    v.boolean(),
    v.description("The operator's server (OPENAI_*/OLLAMA_* settings): every user may use it, nobody can change it."),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Connection = v.InferOutput<typeof ConnectionSchema>;

export const ModelListSchema = v.strictObject({
  models: v.pipe(v.array(v.string()), v.description('The ids of the models the server offers, as it lists them.')),
});

export const TestConnectionSchema = v.object({
  model: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(200, 'must be at most 200 characters'),
      v.description('Also check that the server offers this model.'),
    ),
  ),
});

export const TestResultSchema = v.strictObject({
  ok: v.boolean(),
  message: v.pipe(v.string(), v.description('What works, or what is wrong, in words (never a key).')),
});
