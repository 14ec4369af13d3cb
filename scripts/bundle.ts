// How a server is bundled for plain `node`: the production build (scripts/build.ts) and the
// benchmark's reference servers use the same settings, so their ratios compare code, not loading.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build, type Plugin } from 'esbuild';

/** Packages with native code or files of their own, found in node_modules/ at run time. */
export const EXTERNAL_PACKAGES = ['better-sqlite3', 'pdfjs-dist', 'swagger-ui-dist', 'esbuild'];

const resolveFromRoot = createRequire(import.meta.url).resolve;

/**
 * Koa's dependencies are most of what a start loads before the service's own code, and the media
 * type table (mime-db, ~230 KB) most of those; two things make it cheaper, with the same answers:
 * - `accepts` (which Koa loads at start, and which serves only `ctx.accepts()`) gets the one
 *   mime-types (and table) Koa itself uses, not an older copy of both of its own: its lookups of
 *   names like `html` or `json` find the same types in either.
 * - The table is read with JSON.parse from one string instead of compiled as a ~230 KB object
 *   literal (V8 parses JSON more cheaply than the same object written as JavaScript).
 */
const koaStartCost: Plugin = {
  name: 'koa-start-cost',
  setup(bundle) {
    bundle.onResolve({ filter: /^mime-types$/ }, (args) =>
      /[\\/]node_modules[\\/]accepts[\\/]/.test(args.importer) ? { path: resolveFromRoot('mime-types') } : undefined,
    );
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
