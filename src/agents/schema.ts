// Request bodies of `/agents`.
import * as v from 'valibot';
import { IdSchema, jsonDepth, MAX_JSON_DEPTH, NameSchema, noArrays } from '../http/validate.js';

export const AGENT_TYPES = ['VENDOR_A', 'REACT'] as const;

const LlmPartSchema = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'));

/** `{ model, provider }`; further keys (an api key, say) are kept, stored and never returned. */
const LlmSchema = v.pipe(
  noArrays(v.looseObject({ model: LlmPartSchema, provider: LlmPartSchema }, 'must be an object with model and provider')),
  v.check((llm) => jsonDepth(llm) <= MAX_JSON_DEPTH, `must be nested at most ${MAX_JSON_DEPTH} levels deep`),
  v.check((llm) => Buffer.byteLength(JSON.stringify(llm)) <= 16 * 1024, 'must be at most 16384 bytes as JSON'),
  v.transform(({ model, provider, ...extra }) => ({ model, provider, extra })),
);

/** A tag is named by its id, or by an object with that id (the interface sends tag objects). */
const TagRefSchema = v.pipe(
  v.union([IdSchema, noArrays(v.object({ id: IdSchema }))], 'must be a tag id or a tag object with an id'),
  v.transform((ref) => (typeof ref === 'string' ? ref : ref.id)),
);

const TagsSchema = v.pipe(
  v.array(TagRefSchema, 'must be an array of tags'),
  v.maxLength(100, 'must hold at most 100 tags'),
  v.transform((ids) => [...new Set(ids)]),
);

const fields = {
  name: NameSchema,
  type: v.picklist(AGENT_TYPES, `must be one of ${AGENT_TYPES.join(', ')}`),
  llm: LlmSchema,
  hasMemory: v.boolean('must be true or false'),
  promptId: v.nullable(IdSchema),
  documentId: v.nullable(IdSchema),
  tags: TagsSchema,
};

export const CreateAgentSchema = v.object({
  ...fields,
  hasMemory: v.optional(fields.hasMemory, false),
  promptId: v.optional(fields.promptId, null),
  documentId: v.optional(fields.documentId, null),
  tags: v.optional(fields.tags, []),
});
export const UpdateAgentSchema = v.partial(v.object(fields));

export type AgentInput = v.InferOutput<typeof CreateAgentSchema>;
export type AgentChange = v.InferOutput<typeof UpdateAgentSchema>;
