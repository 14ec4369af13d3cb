// `/agents`: language-model agents with their llm setting, prompt, document and tags.
import type Router from '@koa/router';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { notFound } from '../http/errors.js';
import { created, ok, okPage } from '../http/respond.js';
import { parseBody, parseId, parsePageRequest } from '../http/validate.js';
import { createAgentDocument, isAgentDocumentBody } from '../links/routes.js';
import { presentAgent } from './present.js';
import { CreateAgentSchema, UpdateAgentSchema } from './schema.js';

export function agentRoutes(router: Router<AppState>, { stores, requireCaller }: Deps): void {
  const { agents } = stores;

  router.get('/agents', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const page = parsePageRequest(ctx, (id) => agents.seqOfAgent(caller.id, id));
    okPage(ctx, agents.listAgents(caller.id, page), (agent) => presentAgent(agent, caller));
  });

  router.post('/agents', requireCaller, (ctx) => {
    if (isAgentDocumentBody(ctx.request.body)) return createAgentDocument(ctx, stores);
    const caller = callerOf(ctx);
    const input = parseBody(ctx, CreateAgentSchema);
    created(ctx, presentAgent(agents.createAgent(caller.id, input), caller));
  });

  router.get('/agents/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const agent = agents.getAgent(caller.id, parseId(ctx));
    if (!agent) throw notFound('Agent');
    ok(ctx, presentAgent(agent, caller));
  });

  router.patch('/agents/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    const change = parseBody(ctx, UpdateAgentSchema);
    const agent = agents.updateAgent(caller.id, id, change);
    if (!agent) throw notFound('Agent');
    ok(ctx, presentAgent(agent, caller));
  });

  router.delete('/agents/:id', requireCaller, (ctx) => {
    if (!agents.deleteAgent(callerOf(ctx).id, parseId(ctx))) throw notFound('Agent');
    ok(ctx, null);
  });
}
