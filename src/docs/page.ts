// `GET /docs`: the API reference page. Swagger UI comes from the swagger-ui-dist package and is
// served from node_modules by the service itself (no CDN: the page works offline), rendering
// /api/v1/openapi.json. Only the few files the page needs are served, never the package folder.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AppMiddleware } from '../http/context.js';
import { codePath } from '../lib/paths.js';

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** What the page may load: everything from this origin, nothing inline but styles Swagger UI sets. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  file: string;
  type: string;
}

/** The files under /docs/, and where each one lives. */
const ASSETS: Record<string, Asset> = {
  'swagger-ui.css': { file: join(SWAGGER_UI_DIR, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: join(SWAGGER_UI_DIR, 'favicon-32x32.png'), type: 'image/png' },
  // Copied into dist/docs/ by the build.
  'swagger-init.js': { file: codePath('docs/swagger-init.js'), type: 'text/javascript; charset=utf-8' },
};

/**
 * The page. It is served at both /docs and /docs/, so its links are relative to where it is:
 * `prefix` reaches /docs/ and `root` reaches the service root (this also works behind a proxy
 * that mounts the service under a path).
 */
function pageHtml(prefix: string, root: string): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Agent management service: API reference</title>
    <link rel="stylesheet" href="${prefix}swagger-ui.css">
    <link rel="icon" type="image/png" href="${prefix}favicon-32x32.png">
  </head>
  <body>
    <noscript>This page needs JavaScript. The OpenAPI document itself is at <a href="${root}api/v1/openapi.json">/api/v1/openapi.json</a>.</noscript>
    <div id="swagger-ui" data-spec-url="${root}api/v1/openapi.json"></div>
    <script src="${prefix}swagger-ui-bundle.js"></script>
    <script src="${prefix}swagger-init.js"></script>
  </body>
</html>
`;
}

interface Loaded {
  body: Buffer;
  type: string;
  etag: string;
}

/** The paths the docs page is served at: mount `docsPage()` on the router for all methods there. */
export const DOCS_PATHS = ['/docs', '/docs/', '/docs/:file'];

/**
 * Serves /docs, /docs/ and the page's files (read once, on first use; validated with an ETag).
 * Mounted as routes (DOCS_PATHS, every method) rather than as middleware, so other requests never
 * reach it; a method other than GET or HEAD, or a file that is not one of the page's, passes on (404).
 */
export function docsPage(): AppMiddleware {
  const cache = new Map<string, Loaded>();
  const load = (name: string, make: () => { body: Buffer; type: string }): Loaded => {
    let loaded = cache.get(name);
    if (!loaded) {
      const { body, type } = make();
      loaded = { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      cache.set(name, loaded);
    }
    return loaded;
  };

  return async function docsPageMiddleware(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();

    let loaded: Loaded;
    if (ctx.path === '/docs' || ctx.path === '/docs/') {
      const [prefix, root] = ctx.path === '/docs' ? ['docs/', ''] : ['', '../'];
      loaded = load(ctx.path, () => ({ body: Buffer.from(pageHtml(prefix, root)), type: 'text/html; charset=utf-8' }));
      ctx.set('Content-Security-Policy', DOCS_CSP);
      ctx.set('Referrer-Policy', 'no-referrer');
    } else {
      const asset = Object.hasOwn(ASSETS, ctx.path.slice('/docs/'.length)) ? ASSETS[ctx.path.slice('/docs/'.length)] : undefined;
      if (!asset) return next();
      loaded = load(ctx.path, () => ({ body: readFileSync(asset.file), type: asset.type }));
    }

    // The envelope middleware marks every answer no-store; these hold no secrets and may be
    // cached, but are revalidated so an upgrade shows at once.
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', loaded.etag);
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = loaded.type;
    ctx.body = loaded.body;
  };
}
