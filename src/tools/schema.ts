// Request bodies of `/tools`.
import * as v from 'valibot';
import { DescriptionSchema, JsonObjectSchema, NameSchema } from '../http/validate.js';

export const TOOL_TYPES = ['SEARCH', 'ENGINE_ALPHA', 'HOSTED_MODEL', 'AUTOMATION_NLA', 'AGENT', 'OPENAPI'] as const;

const fields = {
  name: NameSchema,
  type: v.picklist(TOOL_TYPES, `must be one of ${TOOL_TYPES.join(', ')}`),
  /** What the model is told the tool does; null: a default for the tool's type. */
  description: v.nullable(DescriptionSchema),
  /** Settings such as automation_nla_api_key: stored, never returned. */
  metadata: JsonObjectSchema,
};

export const CreateToolSchema = v.object({ ...fields, description: v.optional(fields.description, null), metadata: v.optional(fields.metadata, {}) });
export const UpdateToolSchema = v.partial(v.object(fields));
export type ToolInput = v.InferOutput<typeof CreateToolSchema>;
