// The shapes of `/agent-documents` and `/agent-tools`: bodies, list filters and the links as answered.
import * as v from 'valibot';
import { IdSchema } from '../http/validate.js';
import { Id, Timestamp } from '../http/shapes.js';
import { AgentBriefSchema } from '../agents/schema.js';
import { DocumentSchema } from '../documents/schema.js';
import { ToolSchema } from '../tools/schema.js';
import { UserSchema } from '../users/schema.js';

/** Body of POST /agent-documents (and of the link form of POST /agents). */
export const AgentDocumentBodySchema = v.object({ agentId: IdSchema, documentId: IdSchema });
const RequiresApprovalSchema = v.pipe(
  v.boolean('must be true or false'),
  v.description(
    "The model's calls of this tool by this agent wait for a person's approval (the run becomes `requires_action`; POST /runs/{id}/actions answers them).",
  ),
);
/** Body of POST /agent-tools. */
export const AgentToolBodySchema = v.object({
  agentId: IdSchema,
  toolId: IdSchema,
  requiresApproval: v.optional(RequiresApprovalSchema, false),
});
/** Body of PATCH /agent-tools/{id}: what a link lets change (the agent and tool it joins do not). */
export const AgentToolChangeSchema = v.object({ requiresApproval: v.optional(RequiresApprovalSchema) });

const EXPAND_WORDS = ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'];
/**
 * `?expand=`: the original API's clients send it on these two lists to have each link's document or
 * tool included. Here it always is, so the value is checked and changes nothing.
 */
const ExpandSchema = v.pipe(
  v.optional(
    v.pipe(
      v.string('must be given once'),
      v.transform((text) => text.toLowerCase()),
      v.picklist(EXPAND_WORDS, 'must be true or false'),
    ),
  ),
  v.description(
    'Accepted for clients of the original API (true or false; also 1/0, yes/no, on/off). Each link always ' +
      'includes its agent and its document or tool, so it changes nothing.',
  ),
);

/** List filters of GET /agent-documents (besides `limit` and `after`); `expand` filters nothing. */
export const AgentDocumentFilters = { agentId: v.optional(IdSchema), documentId: v.optional(IdSchema), expand: ExpandSchema };
/** List filters of GET /agent-tools (besides `limit` and `after`); `expand` filters nothing. */
export const AgentToolFilters = { agentId: v.optional(IdSchema), toolId: v.optional(IdSchema), expand: ExpandSchema };

const linkEntries = {
  id: Id,
  userId: Id,
  user: UserSchema,
  agent: AgentBriefSchema,
  agentId: Id,
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const AgentDocumentSchema = v.strictObject({ ...linkEntries, document: DocumentSchema, documentId: Id });
export const AgentToolSchema = v.strictObject({
  ...linkEntries,
  tool: ToolSchema,
  toolId: Id,
  requiresApproval: v.pipe(v.boolean(), v.description("The model's calls of this tool by this agent wait for a person's approval.")),
});
export type AgentDocument = v.InferOutput<typeof AgentDocumentSchema>;
export type AgentTool = v.InferOutput<typeof AgentToolSchema>;
