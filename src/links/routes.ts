// `/agent-documents` and `/agent-tools`: link records between an agent and a document or tool.
import type Router from '@koa/router';
import * as v from 'valibot';
import type { AppContext, AppState, Caller } from '../http/context.js';
import type { Deps, Stores } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { notFound } from '../http/errors.js';
import { created, ok, okPage } from '../http/respond.js';
import { IdSchema, parse, parseBody, parseId, parsePageRequest } from '../http/validate.js';
import { presentUser } from '../users/present.js';
import { presentAgentBrief } from '../agents/present.js';
import { presentDocument } from '../documents/present.js';
import { presentTool } from '../tools/present.js';
import type { LinkRow, LinkStore } from './store.js';

interface LinkRoutesSpec<Target> {
  path: string;
  what: string;
  store: (stores: Stores) => LinkStore<Target>;
  /** The body field and query filter naming the target: `documentId` or `toolId`. */
  targetField: 'documentId' | 'toolId';
  /** The response field holding the nested target: `document` or `tool`. */
  targetKey: 'document' | 'tool';
  presentTarget: (target: Target, owner: Caller) => unknown;
  /** The body of a create: `agentId` and the target field. */
  bodySchema: v.GenericSchema;
  /** The list filters: `agentId` and the target field. */
  filterSchema: v.GenericSchema;
}

/** Body of POST /agent-documents (and of the endpoint-19 form of POST /agents). */
export const AgentDocumentBodySchema = v.object({ agentId: IdSchema, documentId: IdSchema });
/** Body of POST /agent-tools. */
export const AgentToolBodySchema = v.object({ agentId: IdSchema, toolId: IdSchema });
/** List filters of GET /agent-documents (besides `limit` and `after`). */
export const AgentDocumentFilterSchema = v.object({ agentId: v.optional(IdSchema), documentId: v.optional(IdSchema) });
/** List filters of GET /agent-tools (besides `limit` and `after`). */
export const AgentToolFilterSchema = v.object({ agentId: v.optional(IdSchema), toolId: v.optional(IdSchema) });

function presentLink<Target>(spec: LinkRoutesSpec<Target>, link: LinkRow<Target>, owner: Caller) {
  return {
    id: link.id,
    userId: link.userId,
    user: presentUser(owner),
    agent: presentAgentBrief(link.agent, owner),
    agentId: link.agentId,
    [spec.targetKey]: spec.presentTarget(link.target, owner),
    [spec.targetField]: link.targetId,
    createdAt: link.createdAt,
    updatedAt: link.updatedAt,
  };
}

function mountLinkRoutes<Target>(router: Router<AppState>, { stores, requireCaller }: Deps, spec: LinkRoutesSpec<Target>): void {
  const links = spec.store(stores);

  router.get(spec.path, requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const filter = parse(spec.filterSchema, ctx.query) as { agentId?: string } & Record<string, string | undefined>;
    const page = parsePageRequest(ctx, (id) => links.seqOf(caller.id, id));
    const rows = links.list(caller.id, page, { agentId: filter.agentId, targetId: filter[spec.targetField] });
    okPage(ctx, rows, (link) => presentLink(spec, link, caller));
  });

  router.post(spec.path, requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const input = parseBody(ctx, spec.bodySchema) as { agentId: string } & Record<string, string>;
    created(ctx, presentLink(spec, links.create(caller.id, input.agentId, input[spec.targetField]), caller));
  });

  router.get(`${spec.path}/:id`, requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const link = links.get(caller.id, parseId(ctx));
    if (!link) throw notFound(spec.what);
    ok(ctx, presentLink(spec, link, caller));
  });

  router.delete(`${spec.path}/:id`, requireCaller, (ctx) => {
    if (!links.delete(callerOf(ctx).id, parseId(ctx))) throw notFound(spec.what);
    ok(ctx, null);
  });
}

const AGENT_DOCUMENTS: LinkRoutesSpec<Parameters<typeof presentDocument>[0]> = {
  path: '/agent-documents',
  what: 'Agent document',
  store: (stores) => stores.agentDocuments,
  targetField: 'documentId',
  targetKey: 'document',
  presentTarget: presentDocument,
  bodySchema: AgentDocumentBodySchema,
  filterSchema: AgentDocumentFilterSchema,
};

const AGENT_TOOLS: LinkRoutesSpec<Parameters<typeof presentTool>[0]> = {
  path: '/agent-tools',
  what: 'Agent tool',
  store: (stores) => stores.agentTools,
  targetField: 'toolId',
  targetKey: 'tool',
  presentTarget: presentTool,
  bodySchema: AgentToolBodySchema,
  filterSchema: AgentToolFilterSchema,
};

export function agentDocumentRoutes(router: Router<AppState>, deps: Deps): void {
  mountLinkRoutes(router, deps, AGENT_DOCUMENTS);
}

export function agentToolRoutes(router: Router<AppState>, deps: Deps): void {
  mountLinkRoutes(router, deps, AGENT_TOOLS);
}

/**
 * Interface endpoint 19: its only example posts `{ agentId, documentId }` to POST /agents.
 * True when the body is such a request (it names `agentId` and no `name`).
 */
export function isAgentDocumentBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'agentId' in body && !('name' in body);
}

/** Answers an agent-document link creation (shared by both paths of endpoint 19). */
export function createAgentDocument(ctx: AppContext, stores: Stores): void {
  const caller = callerOf(ctx);
  const input = parseBody(ctx, AgentDocumentBodySchema);
  created(ctx, presentLink(AGENT_DOCUMENTS, stores.agentDocuments.create(caller.id, input.agentId, input.documentId), caller));
}
