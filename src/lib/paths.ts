// Where the files the service reads at run time are. The code runs from src/ (tsx: `npm start`, the
// tests, the scripts) or bundled into dist/main.js (`npm run build`, the production start), so a
// module cannot name a file relative to itself: the bundle has one location for every module.
// Both find the installation's root the same way, as the nearest directory above the code that
// holds schema.sql (the repository, or the container's /app).
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'schema.sql'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no schema.sql in ${start} or any directory above it: the installation is incomplete`);
  }
}

/** The installation: schema.sql, migrations/, package.json, src/ or dist/. */
export const ROOT = findRoot(here);

/** True when this is the production build (dist/), false when it runs from the TypeScript sources. */
export const FROM_BUILD = here === join(ROOT, 'dist') || here.startsWith(join(ROOT, 'dist') + sep);

/** `path` under the code that is running: dist/<path> in the build, src/<path> from the sources. */
export const codePath = (path: string): string => join(ROOT, FROM_BUILD ? 'dist' : 'src', path);
