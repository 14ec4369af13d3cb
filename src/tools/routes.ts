// `/tools`: capabilities an agent can be given (linked through /agent-tools).
import { validationFailed } from '../http/errors.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { inlineSpecProblem, SCHEMA_LIMITS } from './runtime/openapi.js';
import { presentTool } from './present.js';
import { CreateToolSchema, ToolSchema, UpdateToolSchema } from './schema.js';
import type { ToolStore } from './store.js';

/**
 * Refuses an inline OpenAPI spec over the size limits before it is stored. A change that leaves
 * `type` out is checked too: a `spec` in the metadata of another type is never read.
 */
async function checkInlineSpec(change: { type?: string; metadata?: Record<string, unknown> }): Promise<void> {
  if (change.metadata === undefined || (change.type !== undefined && change.type !== 'OPENAPI')) return;
  const problem = await inlineSpecProblem(change.metadata);
  if (problem !== undefined) throw validationFailed([{ path: 'metadata.spec', message: `is too large to offer: ${problem}` }]);
}

const SPEC_LIMITS_TEXT =
  `An inline \`spec\` is refused (422) when its operations' schemas, with their \`$ref\`s inlined, come to more than ${SCHEMA_LIMITS.parts} parts ` +
  `(JSON values) in all or ${SCHEMA_LIMITS.operationParts} in one operation, or hold more than ${SCHEMA_LIMITS.text / 1024} KiB of text, or nest more than ${SCHEMA_LIMITS.depth} levels deep.`;

export function toolRoutes({ tools }: { tools: ToolStore }) {
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
        '`url` of an OpenAPI 3.x document or the document itself as `spec` for OPENAPI; `agentId` for AGENT, which must be one of the caller\'s agents (422 otherwise). ' +
        SPEC_LIMITS_TEXT,
      check: checkInlineSpec,
    },
    update: {
      body: UpdateToolSchema,
      description: 'Checked as on create: an AGENT tool\'s `metadata.agentId` must be one of the caller\'s agents (422 otherwise), and an OPENAPI tool\'s inline `spec` must be within the limits.',
      check: checkInlineSpec,
    },
    delete: { answers: 'null', description: "The tool's agent-tool links are deleted too." },
  });
}
