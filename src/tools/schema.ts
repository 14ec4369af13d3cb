// The shapes of `/tools`: request bodies and the tool as answered.
import * as v from 'valibot';
import { DescriptionSchema, JsonObjectSchema, NameSchema } from '../http/validate.js';
import { Id, Timestamp } from '../http/shapes.js';
import { UserSchema } from '../users/schema.js';
import { TOOL_TYPES } from './kinds/index.js';

export { TOOL_TYPES };

const fields = {
  name: NameSchema,
  type: v.picklist(TOOL_TYPES, `must be one of ${TOOL_TYPES.join(', ')}`),
  /** What the model is told the tool does; null: a default for the tool's type. */
  description: v.nullable(DescriptionSchema),
  /** Settings such as automation_nla_api_key: stored, never returned; the keys its type reads are checked by the type's kind. */
  metadata: JsonObjectSchema,
};

export const CreateToolSchema = v.object({
  ...fields,
  description: v.optional(fields.description, null),
  metadata: v.optional(fields.metadata, {}),
});
export const UpdateToolSchema = v.partial(v.object(fields));
export type ToolInput = v.InferOutput<typeof CreateToolSchema>;
export type ToolChange = v.InferOutput<typeof UpdateToolSchema>;

/** A tool as answered; its `metadata` is stored and never returned (it holds secrets). */
export const ToolSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  name: v.string(),
  type: v.picklist(TOOL_TYPES),
  description: v.pipe(v.nullable(v.string()), v.description('What the model is told the tool does; null: a default for its type.')),
  hasHeaders: v.pipe(
    v.optional(v.boolean()),
    v.description('MCP tools only: whether `metadata.headers` is set (the headers themselves are never shown).'),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Tool = v.InferOutput<typeof ToolSchema>;
