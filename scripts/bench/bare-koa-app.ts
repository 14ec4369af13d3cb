// The bare-Koa reference app: Koa + @koa/router + koa-bodyparser doing the same work per request
// as the service (reference-work.ts: its stores, schemas, sealer and presenters) with the least glue
// Koa needs: one error handler, one router, no request ids, no extra headers, no logging. Served
// over HTTP by reference-koa.ts, and called in-process by in-process.ts.
import Koa from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import { ApiError } from '../../src/http/errors.js';
import type { referenceWork } from './reference-work.js';

export function bareKoaApp(work: ReturnType<typeof referenceWork>): Koa {
  const app = new Koa();
  const router = new Router();

  app.use(async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 404) throw new ApiError(404, 'not_found', 'Route not found.');
    } catch (error) {
      const known = error instanceof ApiError;
      if (!known) process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
      ctx.status = known ? error.status : 500;
      ctx.body = { success: false, data: null, error: { code: known ? error.code : 'internal', message: (error as Error).message } };
    }
  });
  app.use(bodyParser({ enableTypes: ['json'] }));

  const caller = (ctx: Koa.Context) => work.authenticate(ctx.get('Autorization') || ctx.get('Authorization') || undefined);
  const ok = (ctx: Koa.Context, data: unknown, status = 200) => {
    ctx.status = status;
    ctx.body = { success: true, data };
  };

  router.get('/healthz', (ctx) => ok(ctx, work.health()));
  router.post('/api/v1/auth/sign-in', async (ctx) => ok(ctx, await work.signIn(ctx.request.body)));
  router.post('/api/v1/tools', (ctx) => ok(ctx, work.createTool(caller(ctx), ctx.request.body), 201));
  router.get('/api/v1/agents', (ctx) => {
    const { data, nextAfter } = work.listAgents(caller(ctx), ctx.query as Record<string, string>);
    if (nextAfter !== undefined) {
      const url = new URL(ctx.originalUrl, `${ctx.protocol}://${ctx.host}`);
      url.searchParams.set('after', nextAfter);
      ctx.set('Link', `<${url.href}>; rel="next"`);
    }
    ok(ctx, data);
  });
  router.post('/api/v1/agents', (ctx) => ok(ctx, work.createAgent(caller(ctx), ctx.request.body), 201));
  router.get('/api/v1/agents/:id', (ctx) => ok(ctx, work.getAgent(caller(ctx), ctx.params.id)));
  router.patch('/api/v1/agents/:id', (ctx) => ok(ctx, work.updateAgent(caller(ctx), ctx.params.id, ctx.request.body)));

  app.use(router.routes());
  return app;
}
