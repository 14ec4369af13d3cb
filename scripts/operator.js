// How `npm run backup`, `npm run user:create` and the other operator scripts start, in a development
// checkout and in the container alike: `node scripts/operator.js <name> [arguments]`.
// - Beside the sources (scripts/<name>.ts), it loads tsx, exactly as `node --import tsx` does, and
//   runs the TypeScript: what is checked out is what runs, never a stale build.
// - Without them (the container, which holds no sources and no tsx), it runs the bundle
//   `npm run build` made of the script, dist/scripts/<name>.js, with plain node.
// Plain JavaScript, so it runs in both. `npm run build` bundles every script package.json runs this way.
import { existsSync } from 'node:fs';

const [name] = process.argv.splice(2, 1); // the script reads its own arguments from process.argv
if (!name || !/^[\w-]+$/.test(name)) {
  process.stderr.write('usage: node scripts/operator.js <script name> [arguments]\n');
  process.exit(2);
}

const source = new URL(`${name}.ts`, import.meta.url);
const bundle = new URL(`../dist/scripts/${name}.js`, import.meta.url);
if (existsSync(source)) {
  await import('tsx');
  await import(source.href);
} else if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  process.stderr.write(`error: neither scripts/${name}.ts nor dist/scripts/${name}.js is here (npm run build makes the second)\n`);
  process.exit(1);
}
