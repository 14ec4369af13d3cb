// The web console at `/`: a Preact app (./app/, TSX) bundled by esbuild into one script and one
// stylesheet, kept in memory and served under content-hashed names with long caching.
// `npm run build` writes the bundle beside the compiled code (dist/console/bundle/), and the
// production start serves those files: no esbuild, no Preact and no sources at run time (the
// production install has none of them). Started from the sources (`npm start`, tests), the first
// request for the console bundles it: esbuild is imported and started only then and stopped once the
// bundle is built, so the console costs neither start-up time nor idle memory and nothing needs
// building before `npm start`.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../http/context.js';
import type { RouteRegistry } from '../http/route.js';
import { codePath, FROM_BUILD, ROOT } from '../lib/paths.js';
import { packageVersion } from '../lib/version.js';

/** What the console may load and do: its own files and the API on this origin, nothing inline. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Agents' avatar images may live on another https origin (no referrer is sent, see below).
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ENTRY = join(ROOT, 'src', 'console', 'app', 'main.tsx');
/** Where `npm run build` leaves the bundle: dist/console/bundle/. */
export const PREBUILT_DIR = codePath(join('console', 'bundle'));
const PREBUILT = { script: 'app.js', stylesheet: 'app.css' };

interface Asset {
  body: Buffer;
  type: string;
}

/**
 * The console's icon, linked from the page so that browsers do not ask for /favicon.ico (a 404 and a
 * console error on every load). Kept here, not in a file: the production start has no sources.
 */
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/><path d="M8 8h16a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2h-9l-5 4v-4H8a2 2 0 0 1-2-2v-9a2 2 0 0 1 2-2z" fill="#fff"/></svg>\n';

/** The page and its files; `files` is keyed by the hashed name served under /console/. */
export interface ConsoleBundle {
  html: Buffer;
  etag: string;
  files: Map<string, Asset>;
  /** The hashed names, for the page and for tests. */
  script: string;
  stylesheet: string;
  icon: string;
}

const hashOf = (body: Buffer | Uint8Array, length: number) => createHash('sha256').update(body).digest('base64url').slice(0, length);

/** The console: in the build, the files `npm run build` wrote; from the sources, bundled now. */
export function loadConsole(): Promise<ConsoleBundle> {
  if (!FROM_BUILD) return buildConsole();
  const script = join(PREBUILT_DIR, PREBUILT.script);
  const stylesheet = join(PREBUILT_DIR, PREBUILT.stylesheet);
  if (!existsSync(script) || !existsSync(stylesheet)) {
    return Promise.reject(new Error(`the console's files are missing from ${PREBUILT_DIR}: run npm run build`));
  }
  return Promise.resolve(consoleBundle(readFileSync(script), readFileSync(stylesheet)));
}

/** Bundles the console with esbuild (imported here, not at start-up), then stops esbuild's process. */
export async function buildConsole(): Promise<ConsoleBundle> {
  const { script, stylesheet } = await bundleSources();
  return consoleBundle(script, stylesheet);
}

/** For `npm run build`: writes the bundle where `loadConsole` finds it. */
export async function writeConsoleBundle(dir = PREBUILT_DIR): Promise<void> {
  const { script, stylesheet } = await bundleSources();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, PREBUILT.script), script);
  writeFileSync(join(dir, PREBUILT.stylesheet), stylesheet);
}

async function bundleSources(): Promise<{ script: Uint8Array; stylesheet: Uint8Array }> {
  const esbuild = await import('esbuild');
  try {
    const result = await esbuild.build({
      entryPoints: [ENTRY],
      bundle: true,
      minify: true,
      format: 'esm',
      target: ['es2020'],
      jsx: 'automatic',
      jsxImportSource: 'preact',
      outdir: 'out',
      entryNames: 'app',
      write: false,
      legalComments: 'none',
      logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
    });
    const script = result.outputFiles.find((output) => output.path.endsWith('.js'))?.contents;
    const stylesheet = result.outputFiles.find((output) => output.path.endsWith('.css'))?.contents;
    if (!script || !stylesheet) throw new Error('the console bundle lacks its script or its stylesheet');
    return { script, stylesheet };
  } finally {
    await esbuild.stop();
  }
}

/** The page and its files, named by their content. */
function consoleBundle(scriptBody: Uint8Array, stylesheetBody: Uint8Array): ConsoleBundle {
  const script = `app.${hashOf(scriptBody, 16)}.js`;
  const stylesheet = `app.${hashOf(stylesheetBody, 16)}.css`;
  const iconBody = Buffer.from(ICON_SVG);
  const icon = `icon.${hashOf(iconBody, 16)}.svg`;
  const files = new Map<string, Asset>([
    [script, { body: Buffer.from(scriptBody), type: 'text/javascript; charset=utf-8' }],
    [stylesheet, { body: Buffer.from(stylesheetBody), type: 'text/css; charset=utf-8' }],
    [icon, { body: iconBody, type: 'image/svg+xml' }],
  ]);
  const html = Buffer.from(pageHtml(script, stylesheet, icon));
  return { html, etag: `"${hashOf(html, 27)}"`, files, script, stylesheet, icon };
}

/**
 * The page: links relative to `/`, so it also works behind a proxy that mounts the service under a
 * path. It carries the service's version, which the console shows (the OpenAPI document says the same).
 */
function pageHtml(script: string, stylesheet: string, icon: string): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="service-version" content="${packageVersion().replace(/[^\w.+-]/g, '')}">
    <title>Agent console</title>
    <link rel="icon" type="image/svg+xml" href="console/${icon}">
    <link rel="stylesheet" href="console/${stylesheet}">
    <script type="module" src="console/${script}"></script>
  </head>
  <body>
    <div id="app"><noscript>The console needs JavaScript. The API reference is at <a href="docs">/docs</a>.</noscript></div>
  </body>
</html>
`;
}

/** Mounts `GET /` and `GET /console/<hashed file>` on the root router (no middleware of their own). */
export function consoleRoutes(router: RouteRegistry, build: () => Promise<ConsoleBundle> = loadConsole): void {
  let bundle: Promise<ConsoleBundle> | undefined;
  // Concurrent first requests share one build; a failed build is tried again by the next request.
  const load = () =>
    (bundle ??= build().catch((error: unknown) => {
      bundle = undefined;
      throw error;
    }));

  router.get('/', async (ctx: AppContext) => {
    const { html, etag } = await load();
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    // The page names the current hashed files, so it is revalidated on every load.
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', etag);
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html;
  });

  router.get('/console/:file', async (ctx: AppContext, next) => {
    const asset = (await load()).files.get(ctx.params.file);
    if (!asset) return next();
    // The name changes with the content: a browser may keep it for a year without asking again.
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.type = asset.type;
    ctx.body = asset.body;
  });
}
