// `/tools`: capabilities an agent can be given (linked through /agent-tools).
import { parseAsync } from '../http/validate.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { kindOf } from './kinds/index.js';
import { SCHEMA_LIMITS } from './runtime/openapi.js';
import { presentTool } from './present.js';
import { CreateToolSchema, ToolSchema, UpdateToolSchema } from './schema.js';
import type { ToolStore } from './store.js';

/** Checks `metadata` with the schema of the kind of `type` (the body's type already is one) before it is stored. */
async function checkMetadata(type: string | undefined, metadata: Record<string, unknown> | undefined): Promise<void> {
  const kind = type === undefined ? undefined : kindOf(type);
  if (kind && metadata !== undefined) await parseAsync(kind.metadataSchema, metadata, 'metadata');
}

const SPEC_LIMITS_TEXT =
  `An inline \`spec\` is refused (422) when its operations' schemas, with their \`$ref\`s inlined, come to more than ${SCHEMA_LIMITS.parts} parts ` +
  `(JSON values) in all or ${SCHEMA_LIMITS.operationParts} in one operation, or hold more than ${SCHEMA_LIMITS.text / 1024} KiB of text, or nest more than ${SCHEMA_LIMITS.depth} levels deep.`;

export function toolRoutes({ tools }: { tools: ToolStore }) {
  // A change that leaves `type` out is checked against the tool's type (none: the update answers 404).
  return resourceRoutes({
    path: '/tools',
    tag: 'Tools',
    names: { one: 'tool', One: 'Tool', Many: 'Tools', what: 'Tool' },
    schema: ToolSchema,
    present: presentTool,
    store: tools,
    create: {
      body: CreateToolSchema,
      description:
        '`metadata` is stored and never returned. What each type needs in it: `url` (and optional `headers`) for SEARCH and the plain HTTP types; ' +
        "`url` of an OpenAPI 3.x document or the document itself as `spec` for OPENAPI; `agentId` for AGENT, which must be one of the caller's agents (422 otherwise). " +
        SPEC_LIMITS_TEXT,
      check: (input) => checkMetadata(input.type, input.metadata),
    },
    update: {
      body: UpdateToolSchema,
      description:
        "Checked as on create: an AGENT tool's `metadata.agentId` must be one of the caller's agents (422 otherwise), and an OPENAPI tool's inline `spec` must be within the limits.",
      check: (change, caller, id) => checkMetadata(change.type ?? tools.get(caller.id, id)?.type, change.metadata),
    },
    delete: { answers: 'null', description: "The tool's agent-tool links are deleted too." },
  });
}
