// `GET /api/v1/openapi.json`: the OpenAPI document. It is built when the first app is built (so a
// schema the converter cannot describe stops the service at start-up) and is the same for every app.
import type Router from '@koa/router';
import type { AppState } from '../http/context.js';
import { buildOpenApiDocument } from './document.js';

let serialised: string | undefined;

export function openApiRoutes(router: Router<AppState>): void {
  const document = (serialised ??= JSON.stringify(buildOpenApiDocument()));

  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = document;
  });
}
