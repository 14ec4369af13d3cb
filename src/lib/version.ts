// The service's version, as package.json states it (the OpenAPI document and the console show it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.js';

let version: string | undefined;

/** The `version` of package.json (read once: every run with an MCP tool names it to the server). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
