// Writes docs/agent-export.schema.json: the JSON Schema of the agent export format, from the valibot
// schema that checks imports (tests/agent-export.test.ts fails while the file is out of date).
import { writeFileSync } from 'node:fs';
import { AgentExportSchema } from '../src/agents/carry/format.js';
import { standaloneJsonSchema } from '../src/openapi/document.js';

writeFileSync(
  new URL('../docs/agent-export.schema.json', import.meta.url),
  `${JSON.stringify(standaloneJsonSchema(AgentExportSchema), null, 2)}\n`,
);
