// `npm run build`, after tsc: bundles the console into dist/console/bundle/, which the compiled
// service serves (the production start needs neither esbuild nor the TSX sources at run time).
import { fileURLToPath } from 'node:url';
import { writeConsoleBundle } from '../src/console/serve.js';

const dir = fileURLToPath(new URL('../dist/console/bundle/', import.meta.url));
await writeConsoleBundle(dir);
process.stdout.write(`console bundle written to ${dir}\n`);
