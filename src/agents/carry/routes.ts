// `GET /agents/{id}/export` and `POST /agents/import`: an agent carried between services as one
// JSON file (format.ts), or brought in from Letta's Agent File.
import * as v from 'valibot';
import { notFound } from '../../http/errors.js';
import { defineRoute, type Route } from '../../http/route.js';
import type { IngestionQueue } from '../../documents/ingestion.js';
import { buildExport } from './export.js';
import { AgentExportSchema, CARRY_LIMITS, EXPORT_FORMAT, ImportResultSchema } from './format.js';
import { fileUrl } from '../../documents/upload.js';
import { checkToolSettings, importSummary, readCarriedFiles, readImportFile } from './import.js';
import type { CarryStore } from './store.js';
import { QueryFlag } from '../../http/shapes.js';

const ImportBodySchema = v.pipe(
  v.looseObject({}, 'must be a JSON object'),
  v.description(
    `An agent export (format "${EXPORT_FORMAT}", see GET /agents/{id}/export), or a Letta agent file (.af). ` +
      'Its JSON Schema is docs/agent-export.schema.json in the repository.',
  ),
);

/** `agent.json` from the agent's name: letters, digits, dashes and underscores only (a header value). */
const fileName = (name: string) =>
  `${
    name
      .replace(/[^A-Za-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'agent'
  }.agent.json`;

export function carryRoutes({ carry, ingestion }: { carry: CarryStore; ingestion: IngestionQueue }): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/agents/:id/export',
      operationId: 'exportAgent',
      summary: 'Export an agent',
      description:
        `The agent as one JSON file (not in the envelope; \`Content-Disposition: attachment\`): its settings, prompt, tags (by name), tools with their links, ` +
        `document sources (an uploaded document as its file's bytes in \`file\`, at most ${CARRY_LIMITS.fileBytes} bytes each and ${CARRY_LIMITS.filesBytes} in all), and with \`?sessions=true\` its memory. No secret is exported: the agent's key, tool settings that are secret ` +
        '(`headers`, anything named like a key, token or password) and document credentials are left out and marked as needed. ' +
        `At most ${CARRY_LIMITS.tools} tools, ${CARRY_LIMITS.documents} documents, ${CARRY_LIMITS.sessions} sessions and ${CARRY_LIMITS.messages} messages; ` +
        'what did not fit is named in `omitted`.',
      tag: 'Agents',
      auth: true,
      query: v.object({ sessions: QueryFlag }),
      success: { status: 200, description: 'The export file.', raw: AgentExportSchema },
      handler: ({ ctx, caller, params, query }) => {
        const source = carry.readForExport(caller.id, params.id, query.sessions);
        if (!source) throw notFound('Agent');
        ctx.set('Content-Disposition', `attachment; filename="${fileName(source.agent.name)}"`);
        return buildExport(source);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/agents/import',
      operationId: 'importAgent',
      summary: 'Import an agent',
      description:
        "Creates the file's agent with its prompt, tags (an existing tag of the same name is used), tools, links, documents (queued for ingestion; one carrying its file is stored as an upload, its content checked against its type) " +
        "and sessions in the caller's account, in one transaction, all with new ids: importing a file twice makes two copies. " +
        'With `?dryRun=true` it answers what it would create and which secrets are needed, and changes nothing. ' +
        'A file that is not an export of this service or a Letta agent file, or of a newer version, is a 422 naming the field.',
      tag: 'Agents',
      auth: true,
      query: v.object({ dryRun: QueryFlag }),
      body: ImportBodySchema,
      success: { status: 200, description: 'What was (or, on a dry run, would be) created.', data: ImportResultSchema },
      handler: async ({ ctx, caller, query, body }) => {
        const read = readImportFile(body);
        await checkToolSettings(read.file);
        const files = readCarriedFiles(read.file);
        const imported = carry.import(caller.id, read.file, { dryRun: query.dryRun, files, fileUrl: (id) => fileUrl(ctx, id) });
        if (!query.dryRun) for (const document of imported.documents) ingestion.enqueue(document.id);
        return importSummary(read, imported, query.dryRun);
      },
    }),
  ];
}
