// The service's version, as package.json states it (the OpenAPI document and the console show it).
import { readFileSync } from 'node:fs';

/** The `version` of package.json. */
export function packageVersion(): string {
  const path = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}
