// `/agent-documents` and `/agent-tools`: link records between an agent and a document or tool.
import type { AppContext, Caller } from '../http/context.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { defineRoute, type Route } from '../http/route.js';
import { presentUser } from '../users/present.js';
import { presentAgentBrief } from '../agents/present.js';
import { presentDocument } from '../documents/present.js';
import { presentTool } from '../tools/present.js';
import type { DocumentRow } from '../documents/store.js';
import type { ToolRow } from '../tools/store.js';
import type { LinkRow, LinkStore } from './store.js';
import {
  AgentDocumentBodySchema,
  AgentDocumentFilters,
  AgentDocumentSchema,
  AgentToolBodySchema,
  AgentToolChangeSchema,
  AgentToolFilters,
  AgentToolSchema,
  type AgentDocument,
  type AgentTool,
} from './schema.js';

function linkFields<Target>(link: LinkRow<Target>, owner: Caller) {
  return {
    id: link.id,
    userId: link.userId,
    user: presentUser(owner),
    agent: presentAgentBrief(link.agent, owner),
    agentId: link.agentId,
    createdAt: link.createdAt,
    updatedAt: link.updatedAt,
  };
}

export const presentAgentDocument = (link: LinkRow<DocumentRow>, owner: Caller): AgentDocument => ({
  ...linkFields(link, owner),
  document: presentDocument(link.target, owner),
  documentId: link.targetId,
});

export const presentAgentTool = (link: LinkRow<ToolRow>, owner: Caller): AgentTool => ({
  ...linkFields(link, owner),
  tool: presentTool(link.target, owner),
  toolId: link.targetId,
  requiresApproval: link.requiresApproval,
});

/**
 * A body naming `agentId` and no `name` sent to POST /agents asks for an agent-document link (the
 * form the original API's clients use): this route serves it and lets every other body through to
 * agent creation. Mount it before the agent routes.
 */
export function agentDocumentViaAgentsRoute({ agentDocuments }: { agentDocuments: LinkStore<DocumentRow> }): Route {
  const isLinkBody = (ctx: AppContext) => {
    const body = ctx.request.body;
    return typeof body === 'object' && body !== null && !Array.isArray(body) && 'agentId' in body && !('name' in body);
  };
  return defineRoute({
    method: 'post',
    path: '/agents',
    operationId: 'createAgentDocumentViaAgents',
    summary: 'Create an agent-document link',
    description:
      'A body with `agentId` and no `name` creates an agent-document link instead and answers that link, like POST /agent-documents.',
    tag: 'Agents',
    auth: true,
    when: isLinkBody,
    body: AgentDocumentBodySchema,
    success: { status: 201, description: 'The new agent-document link.', data: AgentDocumentSchema },
    errors: [409],
    handler: ({ caller, body }) => presentAgentDocument(agentDocuments.create(caller.id, body), caller),
  });
}

const filterNote = "Filters with an id that is not the caller's match nothing.";

export function agentDocumentRoutes({ agentDocuments }: { agentDocuments: LinkStore<DocumentRow> }): Route[] {
  return resourceRoutes({
    path: '/agent-documents',
    tag: 'Agent documents',
    names: { one: 'agent-document link', One: 'AgentDocument', Many: 'AgentDocuments', what: 'Agent document' },
    schema: AgentDocumentSchema,
    present: presentAgentDocument,
    store: agentDocuments,
    list: { filters: AgentDocumentFilters, description: filterNote },
    create: { body: AgentDocumentBodySchema, errors: [409] },
    delete: { answers: 'null' },
  });
}

export function agentToolRoutes({ agentTools }: { agentTools: LinkStore<ToolRow> }): Route[] {
  return resourceRoutes({
    path: '/agent-tools',
    tag: 'Agent tools',
    names: { one: 'agent-tool link', One: 'AgentTool', Many: 'AgentTools', what: 'Agent tool' },
    schema: AgentToolSchema,
    present: presentAgentTool,
    store: agentTools,
    list: { filters: AgentToolFilters, description: filterNote },
    create: { body: AgentToolBodySchema, errors: [409] },
    update: {
      body: AgentToolChangeSchema,
      description: "`requiresApproval`: whether the model's calls of this tool by this agent wait for approval (from the next call on).",
    },
    delete: { answers: 'null' },
  });
}
