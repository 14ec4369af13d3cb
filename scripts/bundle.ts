// How a server is bundled for plain `node`: the production build (scripts/build.ts) and the
// benchmark's reference servers use the same settings, so their ratios compare code, not loading.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { build, type Plugin } from 'esbuild';

/** Packages with native code or files of their own, found in node_modules/ at run time. */
export const EXTERNAL_PACKAGES = ['better-sqlite3', 'pdfjs-dist', 'swagger-ui-dist', 'esbuild'];

const resolveFromRoot = createRequire(import.meta.url).resolve;
const LAZY_MIME_TYPES = 'lazy-mime-types';
const SKIP = Symbol('resolve mime-types as usual');

/**
 * Koa's dependencies are most of what a start loads before the service's own code, and its media
 * type table most of those: mime-types builds its maps from mime-db (~230 KB) when first required,
 * about 25 ms of CPU. Three things make it cheaper, with the same answers:
 * - Koa, type-is and accepts (every importer of this mime-types) get a stand-in with its functions
 *   that requires the real module at their first call: a process builds the maps when a request
 *   first needs a lookup (the service's JSON answers name their full type and need none:
 *   src/http/json.ts).
 * - `accepts` (which serves only `ctx.accepts()`) gets the mime-types Koa itself uses, not an older
 *   copy of it and its table: its lookups of names like `html` or `json` find the same types.
 * - The table is read with JSON.parse from one string instead of compiled as an object literal
 *   (V8 parses JSON more cheaply than the same object written as JavaScript).
 */
const koaStartCost: Plugin = {
  name: 'koa-start-cost',
  setup(bundle) {
    const rootMimeTypes = resolveFromRoot('mime-types');
    bundle.onResolve({ filter: /^mime-types$/ }, async (args) => {
      if (args.pluginData === SKIP) return undefined;
      const accepts = /[\\/]node_modules[\\/]accepts[\\/]/.test(args.importer);
      const usual = await bundle.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: SKIP,
      });
      return accepts || usual.path === rootMimeTypes ? { path: 'mime-types', namespace: LAZY_MIME_TYPES } : undefined;
    });
    bundle.onLoad({ filter: /.*/, namespace: LAZY_MIME_TYPES }, () => ({
      contents: `let mimeTypes;
const load = () => (mimeTypes ??= require('./index.js'));
module.exports = {
  charset: (type) => load().charset(type),
  charsets: { lookup: (type) => load().charset(type) },
  // A full type with its charset is answered as it is, as mime-types does, without the table.
  contentType: (text) => (typeof text === 'string' && text.includes('/') && text.includes('charset') ? text : load().contentType(text)),
  extension: (type) => load().extension(type),
  lookup: (path) => load().lookup(path),
  get extensions() { return load().extensions; },
  get types() { return load().types; },
};`,
      loader: 'js',
      resolveDir: dirname(rootMimeTypes),
    }));
    bundle.onLoad({ filter: /[\\/]node_modules[\\/]mime-db[\\/]db\.json$/ }, (args) => ({
      contents: `module.exports = JSON.parse(${JSON.stringify(JSON.stringify(JSON.parse(readFileSync(args.path, 'utf8'))))});`,
      loader: 'js',
    }));
  },
};

/**
 * Bundles `entry` (or each of several) into `outdir`/<entry's name>.js, with what it imports
 * dynamically (and what several entries share) split into `outdir`/chunks/.
 */
export async function bundleServer(entry: string | string[], outdir: string): Promise<void> {
  await build({
    entryPoints: typeof entry === 'string' ? [entry] : entry,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL_PACKAGES,
    // The CommonJS packages inside the bundle (koa and its helpers) call require() for Node's modules.
    banner: {
      js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);",
    },
    chunkNames: 'chunks/[name]-[hash]',
    legalComments: 'linked',
    logLevel: 'warning',
    plugins: [koaStartCost],
  });
}
