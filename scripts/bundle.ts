// How a server is bundled for plain `node`: the production build (scripts/build.ts) and the
// benchmark's reference servers use the same settings, so their ratios compare code, not loading.
import { build } from 'esbuild';

/** Packages with native code or files of their own, found in node_modules/ at run time. */
export const EXTERNAL_PACKAGES = ['better-sqlite3', 'pdfjs-dist', 'swagger-ui-dist', 'esbuild'];

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
  });
}
