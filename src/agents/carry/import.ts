// Reading an import file: ours (checked against the format, a newer version refused by name) or
// Letta's (converted, then checked the same way); every tool's settings checked by its kind before
// anything is stored; and the summary an import (or a dry run) answers.
import { parse, parseAsync } from '../../http/validate.js';
import { validationFailed } from '../../http/errors.js';
import { kindOf } from '../../tools/kinds/index.js';
import { AgentExportSchema, EXPORT_FORMAT, EXPORT_VERSION, type AgentExport, type ImportResult } from './format.js';
import { fromLetta, isLettaFile, type Skipped } from './letta.js';
import type { Imported } from './store.js';

export interface ImportFile {
  file: AgentExport;
  source: ImportResult['source'];
  skipped: Skipped[];
}

/** The file as an export of ours, or a 422 saying why it is not one this service reads. */
export function readImportFile(body: Record<string, unknown>): ImportFile {
  if ('format' in body) {
    if (body.format !== EXPORT_FORMAT) {
      throw validationFailed([{ path: 'format', message: `must be "${EXPORT_FORMAT}": this is not an agent export of this service` }]);
    }
    if (typeof body.version === 'number' && body.version > EXPORT_VERSION) {
      throw validationFailed([
        {
          path: 'version',
          message: `is ${body.version}, newer than this service reads (${EXPORT_VERSION}): import it into a newer version of the service`,
        },
      ]);
    }
    return withoutUnstorable({ file: parse(AgentExportSchema, body), source: 'agent-service', skipped: [] });
  }
  if (isLettaFile(body)) {
    const { file, skipped } = fromLetta(body);
    return withoutUnstorable({ file: parse(AgentExportSchema, file, 'converted'), source: 'letta', skipped });
  }
  throw validationFailed([
    { path: '', message: `is neither an agent export of this service (format "${EXPORT_FORMAT}") nor a Letta agent file (.af)` },
  ]);
}

/**
 * Documents carried as uploaded files are left out: this version of the service stores a
 * document's source as a URL only.
 */
function withoutUnstorable(read: ImportFile): ImportFile {
  const skipped = [...read.skipped];
  const documents = read.file.documents.filter((document, index) => {
    if (!document.file) return true;
    skipped.push({ path: `documents.${index}`, reason: `"${document.name}": an uploaded file, which this service cannot store` });
    return false;
  });
  return { ...read, file: { ...read.file, documents }, skipped };
}

/** Checks each tool's settings as its kind does on create (a 422 naming `tools.<i>.metadata.<key>`). */
export async function checkToolSettings(file: AgentExport): Promise<void> {
  for (const [index, tool] of file.tools.entries()) {
    const kind = kindOf(tool.type);
    if (kind) await parseAsync(kind.metadataSchema, tool.metadata, `tools.${index}.metadata`);
  }
}

/** What an import made, or on a dry run would make, and what it needs and left out. */
export function importSummary(read: ImportFile, imported: Imported, dryRun: boolean): ImportResult {
  const { file } = read;
  const secretsNeeded: ImportResult['secretsNeeded'] = [];
  if (file.agent.llm.apiKeyNeeded)
    secretsNeeded.push({ path: 'agent.llm.apiKey', message: "Set the model server's key (PATCH /agents/{id})." });
  const skipped = [...read.skipped];
  file.tools.forEach((tool, index) => {
    for (const field of tool.secretFields) {
      secretsNeeded.push({ path: `tools.${index}.metadata.${field}`, message: `Tool "${tool.name}": give it again (PATCH /tools/{id}).` });
    }
    for (const field of kindOf(tool.type)?.agentFields ?? []) {
      if (!tool.callsThisAgent && tool.metadata[field] === undefined) {
        skipped.push({ path: `tools.${index}.metadata.${field}`, reason: `Tool "${tool.name}": set it to one of your agents` });
      }
    }
  });
  file.documents.forEach((document, index) => {
    if (document.authorizationNeeded) {
      secretsNeeded.push({
        path: `documents.${index}.authorization`,
        message: `Document "${document.name}": give its credentials again (PATCH /documents/{id}).`,
      });
    }
  });
  const sessions = file.sessions ?? [];
  return {
    dryRun,
    source: read.source,
    agentId: dryRun ? null : imported.agent.id,
    creates: {
      agent: file.agent.name,
      prompt: file.prompt !== null,
      tags: imported.tags,
      tools: file.tools.map((tool) => tool.name),
      documents: file.documents.map((document) => document.name),
      sessions: sessions.length,
      messages: sessions.reduce((sum, session) => sum + session.messages.length, 0),
    },
    secretsNeeded,
    skipped,
  };
}
