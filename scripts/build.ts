// `npm run build` (after `tsc --noEmit` has checked the types): the production build in dist/.
// - dist/main.js: the service and its dependencies in one ES module (esbuild), with the code that
//   only some requests need (the model client, the OpenAPI tools' validator, the request body
//   reader) in chunks beside it, loaded on first use. Loading one file instead of
//   ~400 modules halves the CPU time before the first answer and lowers idle memory (docs/operations.md,
//   "Production start"). Packages with native code or files of their own found at run time stay
//   in node_modules/.
// - dist/scripts/<name>.js: the operator scripts (`npm run backup`, `user:create`, ...: every
//   package.json script that runs `node scripts/operator.js <name>`), bundled the same way, with the
//   code they share in dist/scripts/chunks/, so the container runs them with plain node.
// - dist/docs/swagger-init.js: the docs page's one non-TypeScript file.
// - dist/console/bundle/: the web console's script and stylesheet (Preact and the app's TSX,
//   bundled by esbuild now: the production install has neither).
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeConsoleBundle } from '../src/console/serve.js';
import { ROOT } from '../src/lib/paths.js';
import { bundleServer } from './bundle.js';

const dist = join(ROOT, 'dist');
rmSync(dist, { recursive: true, force: true });

await bundleServer(join(ROOT, 'src', 'main.ts'), dist);

const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const operatorScripts = Object.values(scripts).flatMap((command) => /^node scripts\/operator\.js ([\w-]+)$/.exec(command)?.[1] ?? []);
await bundleServer(
  operatorScripts.map((name) => join(ROOT, 'scripts', `${name}.ts`)),
  join(dist, 'scripts'),
);

mkdirSync(join(dist, 'docs'), { recursive: true });
copyFileSync(join(ROOT, 'src', 'docs', 'swagger-init.js'), join(dist, 'docs', 'swagger-init.js'));
await writeConsoleBundle(join(dist, 'console', 'bundle'));
process.stdout.write(`built ${join(dist, 'main.js')}\n`);
