// Reading an import file: ours (checked against the format, a newer version refused by name) or
// Letta's (converted, then checked the same way); every tool's settings checked by its kind before
// anything is stored; and the summary an import (or a dry run) answers.
import { parse, parseAsync } from '../../http/validate.js';
import { validationFailed } from '../../http/errors.js';
import { kindOf } from '../../tools/kinds/index.js';
import { AgentExportSchema, EXPORT_FORMAT, EXPORT_VERSION, type AgentExport, type ImportResult } from './format.js';
import { fromLetta, isLettaFile, type Skipped } from './letta.js';
import { contentMismatch, HEAD_BYTES, servedMediaType } from '../../ingest/sniff.js';
import type { CarriedFile, Imported } from './store.js';

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
    return { file: parse(AgentExportSchema, body), source: 'agent-service', skipped: [] };
  }
  if (isLettaFile(body)) {
    const { file, skipped } = fromLetta(body);
    return { file: parse(AgentExportSchema, file, 'converted'), source: 'letta', skipped };
  }
  throw validationFailed([
    { path: '', message: `is neither an agent export of this service (format "${EXPORT_FORMAT}") nor a Letta agent file (.af)` },
  ]);
}

/**
 * The bytes of each document carrying its file (by index), checked as an upload is: base64 exactly,
 * not empty, and content that fits the document's type (a 422 naming `documents.<i>.file`).
 */
export function readCarriedFiles(file: AgentExport): Map<number, CarriedFile> {
  const files = new Map<number, CarriedFile>();
  for (const [index, document] of file.documents.entries()) {
    if (!document.file) continue;
    const { name, contentType, base64 } = document.file;
    const refuse = (path: string, message: string) => validationFailed([{ path: `documents.${index}.file.${path}`, message }]);
    const bytes = Buffer.from(base64, 'base64');
    // Buffer.from skips what is not base64: a round trip tells a cut or padded-wrong string.
    if (bytes.toString('base64') !== base64) throw refuse('base64', 'must be base64 (padded, without line breaks)');
    if (bytes.length === 0) throw refuse('base64', 'is empty');
    const head = bytes.subarray(0, HEAD_BYTES);
    const mismatch = contentMismatch(document.type, head, name, contentType);
    if (mismatch) throw refuse('base64', `does not match the type ${document.type}: ${mismatch}`);
    files.set(index, { filename: name, contentType: servedMediaType(document.type, contentType, head), bytes });
  }
  return files;
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
