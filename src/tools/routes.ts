// `/tools`: capabilities an agent can be given (linked through /agent-tools).
import type Router from '@koa/router';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { notFound } from '../http/errors.js';
import { created, ok, okPage } from '../http/respond.js';
import { parseBody, parseId, parsePageRequest } from '../http/validate.js';
import { presentTool } from './present.js';
import { CreateToolSchema, UpdateToolSchema } from './schema.js';

export function toolRoutes(router: Router<AppState>, { stores, requireCaller }: Deps): void {
  const { tools } = stores;

  router.get('/tools', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const page = parsePageRequest(ctx, (id) => tools.seqOfTool(caller.id, id));
    okPage(ctx, tools.listTools(caller.id, page), (tool) => presentTool(tool, caller));
  });

  router.post('/tools', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const input = parseBody(ctx, CreateToolSchema);
    created(ctx, presentTool(tools.createTool(caller.id, input), caller));
  });

  router.get('/tools/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const tool = tools.getTool(caller.id, parseId(ctx));
    if (!tool) throw notFound('Tool');
    ok(ctx, presentTool(tool, caller));
  });

  router.patch('/tools/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    const change = parseBody(ctx, UpdateToolSchema);
    const stored = tools.getTool(caller.id, id);
    if (!stored) throw notFound('Tool');
    const next = { name: change.name ?? stored.name, type: change.type ?? stored.type, metadata: change.metadata };
    ok(ctx, presentTool(tools.updateTool(caller.id, id, next, next.type !== stored.type)!, caller));
  });

  router.delete('/tools/:id', requireCaller, (ctx) => {
    if (!tools.deleteTool(callerOf(ctx).id, parseId(ctx))) throw notFound('Tool');
    ok(ctx, null);
  });
}
