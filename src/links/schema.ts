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
/** Body of POST /agent-tools. */
export const AgentToolBodySchema = v.object({ agentId: IdSchema, toolId: IdSchema });
/** List filters of GET /agent-documents (besides `limit` and `after`). */
export const AgentDocumentFilters = { agentId: v.optional(IdSchema), documentId: v.optional(IdSchema) };
/** List filters of GET /agent-tools (besides `limit` and `after`). */
export const AgentToolFilters = { agentId: v.optional(IdSchema), toolId: v.optional(IdSchema) };

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
export const AgentToolSchema = v.strictObject({ ...linkEntries, tool: ToolSchema, toolId: Id });
export type AgentDocument = v.InferOutput<typeof AgentDocumentSchema>;
export type AgentTool = v.InferOutput<typeof AgentToolSchema>;
