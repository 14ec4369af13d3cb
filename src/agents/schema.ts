// The shapes of `/agents`: request bodies and the agent as answered.
import * as v from 'valibot';
import { DescriptionSchema, IdSchema, NameSchema, noArrays } from '../http/validate.js';
import { EmptyObject, Id, Integer, Timestamp } from '../http/shapes.js';
import { DocumentSchema } from '../documents/schema.js';
import { TagSchema } from '../tags/schema.js';
import { UserSchema } from '../users/schema.js';
import { LlmChangeSchema, LlmSchema, PROVIDER_DESCRIPTION } from './llm.js';

export const AGENT_TYPES = ['VENDOR_A', 'REACT'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** A tag is named by its id, or by an object with that id (the original clients send tag objects). */
const TagRefSchema = v.pipe(
  v.union([IdSchema, noArrays(v.object({ id: IdSchema }))], 'must be a tag id or a tag object with an id'),
  v.transform((ref) => (typeof ref === 'string' ? ref : ref.id)),
);

const TagsSchema = v.pipe(
  v.array(TagRefSchema, 'must be an array of tags'),
  v.maxLength(100, 'must hold at most 100 tags'),
  v.transform((ids) => [...new Set(ids)]),
);

/** A picture of the agent: an absolute http(s) URL, shown by clients as is (the service never fetches it). */
const AvatarUrlSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(2000, 'must be at most 2000 characters'),
  v.check((text) => /^https?:\/\/[^/]/i.test(text) && URL.canParse(text), 'must be an absolute http(s) URL'),
);

const fields = {
  name: NameSchema,
  description: v.nullable(DescriptionSchema),
  avatarUrl: v.nullable(AvatarUrlSchema),
  isListed: v.boolean('must be true or false'),
  type: v.picklist(AGENT_TYPES, `must be one of ${AGENT_TYPES.join(', ')}`),
  llm: LlmSchema,
  hasMemory: v.boolean('must be true or false'),
  promptId: v.nullable(IdSchema),
  documentId: v.nullable(IdSchema),
  tags: TagsSchema,
};

export const CreateAgentSchema = v.object({
  ...fields,
  description: v.optional(fields.description, null),
  avatarUrl: v.optional(fields.avatarUrl, null),
  isListed: v.optional(fields.isListed, false),
  hasMemory: v.optional(fields.hasMemory, false),
  promptId: v.optional(fields.promptId, null),
  documentId: v.optional(fields.documentId, null),
  tags: v.optional(fields.tags, []),
});
export const UpdateAgentSchema = v.partial(v.object({ ...fields, llm: LlmChangeSchema }));

export type AgentInput = v.InferOutput<typeof CreateAgentSchema>;
export type AgentChange = v.InferOutput<typeof UpdateAgentSchema>;

/** An agent as nested in link records: without its document and tags. */
export const AgentBriefSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  name: v.string(),
  type: v.picklist(AGENT_TYPES),
  llm: v.strictObject({
    model: v.string(),
    provider: v.pipe(v.string(), v.description(PROVIDER_DESCRIPTION)),
    baseUrl: v.pipe(
      v.nullable(v.string()),
      v.description("The model server (OpenAI-compatible); null: the operator's default for the provider."),
    ),
    hasApiKey: v.pipe(v.boolean(), v.description('Whether a key is stored for the model server (it is never returned).')),
    connectionId: v.optional(
      v.pipe(
        v.string(),
        v.description('Only when the agent uses a connection (GET /connections/{id}), which supplies its server and key.'),
      ),
    ),
  }),
  hasMemory: v.boolean(),
  AgentMemory: v.pipe(
    v.nullable(v.strictObject({ sessions: Integer, messages: Integer })),
    v.description('null when hasMemory is false; else how many sessions and messages the agent remembers.'),
  ),
  promptId: v.nullable(Id),
  documentId: v.pipe(
    v.nullable(Id),
    v.description("The agent's own document (set by create or PATCH), else its oldest agent-document link's, else null."),
  ),
  description: v.nullable(v.string()),
  avatarUrl: v.pipe(v.nullable(v.string()), v.description('An http(s) URL of a picture of the agent.')),
  isListed: v.pipe(v.boolean(), v.description('Shown to every user in GET /agents/library (public fields only).')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type AgentBriefShape = v.InferOutput<typeof AgentBriefSchema>;

/** An agent as create, get, list and update answer. */
export const AgentSchema = v.strictObject({
  ...AgentBriefSchema.entries,
  document: v.pipe(v.union([DocumentSchema, EmptyObject]), v.description('The document documentId names, or {} when none.')),
  tags: v.array(TagSchema),
});
export type Agent = v.InferOutput<typeof AgentSchema>;

/** A listed agent as the library shows it to every user. */
export const LibraryAgentSchema = v.strictObject({
  id: Id,
  name: v.string(),
  description: v.nullable(v.string()),
  avatarUrl: v.nullable(v.string()),
  type: v.picklist(AGENT_TYPES),
  llm: v.strictObject({ model: v.string(), provider: v.string() }),
});
export type LibraryAgent = v.InferOutput<typeof LibraryAgentSchema>;
