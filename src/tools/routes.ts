// `/tools`: capabilities an agent can be given (linked through /agent-tools).
import * as v from 'valibot';
import { parseAsync } from '../http/validate.js';
import { notFound } from '../http/errors.js';
import { QueryFlag } from '../http/shapes.js';
import { defineRoute, type Route } from '../http/route.js';
import type { ToolSet } from '../lib/tool-contract.js';
import type { ToolRecord } from './kinds/kind.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { kindOf } from './kinds/index.js';
import { allowListOf } from './runtime/mcp.js';
import { SCHEMA_LIMITS } from './runtime/openapi.js';
import { presentTool } from './present.js';
import { CreateToolSchema, ToolSchema, UpdateToolSchema, type ToolChange } from './schema.js';
import type { ToolStore } from './store.js';

/** Checks `metadata` with the schema of the kind of `type` (the body's type already is one) before it is stored. */
async function checkMetadata(type: string, metadata: Record<string, unknown>): Promise<void> {
  const kind = kindOf(type);
  if (kind) await parseAsync(kind.metadataSchema, metadata, 'metadata');
}

const SPEC_LIMITS_TEXT =
  `An inline \`spec\` is refused (422) when its operations' schemas, with their \`$ref\`s inlined, come to more than ${SCHEMA_LIMITS.parts} parts ` +
  `(JSON values) in all or ${SCHEMA_LIMITS.operationParts} in one operation, or hold more than ${SCHEMA_LIMITS.text / 1024} KiB of text, or nest more than ${SCHEMA_LIMITS.depth} levels deep.`;

const FunctionSchema = v.strictObject({
  name: v.pipe(v.string(), v.description('The function name the model sees.')),
  description: v.string(),
  parameters: v.pipe(v.record(v.string(), v.unknown()), v.description('JSON Schema of its arguments.')),
  mcpTool: v.pipe(v.optional(v.string()), v.description("MCP tools only: the server's name of the tool, as `metadata.tools` lists it.")),
  allowed: v.pipe(
    v.optional(v.boolean()),
    v.description("With `?all=true` only: whether the tool's allow-list (`metadata.tools`) lets it through."),
  ),
});
const FunctionsSchema = v.strictObject({
  functions: v.array(FunctionSchema),
  warnings: v.pipe(v.array(v.string()), v.description('What is left out of the tool, and why (as a run would say it).')),
  allowList: v.pipe(
    v.optional(v.nullable(v.array(v.string()))),
    v.description('With `?all=true` only: the allow-list `metadata.tools` (null: every tool of the server, now and later).'),
  ),
});

export interface ToolRouteDeps {
  tools: ToolStore;
  /** What one tool offers the model right now (see toolFunctions in runtime/provider.ts). */
  functionsOf(userId: string, record: ToolRecord): Promise<ToolSet>;
}

export function toolRoutes({ tools, functionsOf }: ToolRouteDeps): Route[] {
  const functions = defineRoute({
    method: 'get',
    path: '/tools/:id/functions',
    operationId: 'listToolFunctions',
    summary: 'List what a tool offers the model',
    description:
      'The functions a run starting now would offer the model for this tool, with the names the model sees, and the warnings a run would record. ' +
      "An MCP tool's server is asked (within TOOL_TIMEOUT_MS): a server that cannot be reached answers no functions and a warning saying why. " +
      'With `?all=true`, an MCP tool answers every tool of its server, its allow-list not applied: each says whether the allow-list lets it through (`allowed`), and `allowList` is the list (to choose from).',
    tag: 'Tools',
    auth: true,
    query: v.object({ all: QueryFlag }),
    success: { status: 200, description: 'The functions and warnings.', data: FunctionsSchema },
    handler: async ({ caller, params, query }) => {
      const record = tools.getRecord(caller.id, params.id);
      if (!record) throw notFound('Tool');
      const allowList = allowListOf(record.metadata);
      const set = await functionsOf(caller.id, query.all ? { ...record, metadata: { ...record.metadata, tools: undefined } } : record);
      return {
        functions: set.tools.map(({ name, description, parameters, mcpTool }) => ({
          name,
          description,
          parameters,
          ...(mcpTool === undefined ? {} : { mcpTool }),
          ...(query.all ? { allowed: allowList === null || allowList.includes(mcpTool ?? name) } : {}),
        })),
        warnings: set.warnings,
        ...(query.all ? { allowList } : {}),
      };
    },
  });
  /**
   * A change of `type` or `metadata` is checked as a create of the tool it makes: its type (the
   * stored one where the change leaves it out) with its metadata (the stored one, sealed fields
   * included, where the change leaves it out), so that no PATCH stores what a create refuses. No
   * such tool: nothing to check (the update answers 404).
   */
  async function checkChange(change: ToolChange, userId: string, id: string): Promise<void> {
    if (change.type === undefined && change.metadata === undefined) return;
    const stored = tools.getRecord(userId, id);
    if (!stored) return;
    const type = change.type ?? stored.type;
    if (change.metadata === undefined && type === stored.type) return;
    await checkMetadata(type, change.metadata ?? stored.metadata);
  }

  return [
    functions,
    ...resourceRoutes({
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
          "`url` of an OpenAPI 3.x document or the document itself as `spec` for OPENAPI; `agentId` for AGENT, which must be one of the caller's agents (422 otherwise); " +
          '`url` of a Streamable HTTP MCP server (optional `headers`, and `tools`, an allow-list of its tool names) for MCP. ' +
          SPEC_LIMITS_TEXT,
        check: (input) => checkMetadata(input.type, input.metadata),
      },
      update: {
        body: UpdateToolSchema,
        description:
          "Checked as on create: an AGENT tool's `metadata.agentId` must be one of the caller's agents (422 otherwise), and an OPENAPI tool's inline `spec` must be within the limits. " +
          'A new `type` without `metadata` is checked with the stored metadata (a 422 on `metadata.<key>` when the new type cannot take it: give `metadata` too).',
        check: (change, caller, id) => checkChange(change, caller.id, id),
      },
      delete: { answers: 'null', description: "The tool's agent-tool links are deleted too." },
    }),
  ];
}
