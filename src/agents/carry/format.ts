// The agent export format (`agent-service.agent`, version 1): one JSON document carrying an agent,
// its prompt, tags, tools, documents and optionally its memory, without any secret. The same schema
// checks an import, types the exporter and is the JSON Schema in docs/agent-export.schema.json
// (scripts/agent-export-schema.ts writes it; a test keeps it current).
import * as v from 'valibot';
import { DescriptionSchema, httpUrlSchema, JsonObjectSchema, NameSchema } from '../../http/validate.js';
import { DOCUMENT_TYPES, SplitterSizeSchema } from '../../documents/schema.js';
import { TOOL_TYPES } from '../../tools/schema.js';
import { AGENT_TYPES } from '../schema.js';
import { CreatePromptSchema } from '../../prompts/schema.js';
import { ColorSchema } from '../../tags/schema.js';
import { SessionIdSchema } from '../../runs/schema.js';
import { PROVIDER_DESCRIPTION } from '../llm.js';

export const EXPORT_FORMAT = 'agent-service.agent';
export const EXPORT_VERSION = 1;

/** Bounds of one file, on export and on import (the body limit bounds its bytes). */
export const CARRY_LIMITS = {
  tools: 100,
  documents: 100,
  tags: 100,
  sessions: 100,
  messages: 2000,
  messageChars: 100_000,
  /** An uploaded file's bytes carried in the export, at most. */
  fileBytes: 5 * 1024 * 1024,
  /** All uploaded files' bytes carried in one export, at most. */
  filesBytes: 20 * 1024 * 1024,
} as const;

const bounded = <S extends v.GenericSchema>(item: S, max: number, what: string) =>
  v.pipe(v.array(item, `must be an array of ${what}`), v.maxLength(max, `must hold at most ${max} ${what}`));

const Text = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`));

const SecretFieldsSchema = v.pipe(
  bounded(Text(200), 50, 'field names'),
  v.description('Fields whose secret was removed: give them again after importing.'),
);

const LlmSchema = v.object(
  {
    model: v.pipe(NameSchema, v.description('The model name.')),
    provider: v.pipe(NameSchema, v.description(PROVIDER_DESCRIPTION)),
    baseUrl: v.pipe(v.nullable(httpUrlSchema('keys are never exported')), v.description('The model server; null: the operator default.')),
    apiKeyNeeded: v.pipe(v.boolean('must be true or false'), v.description('The agent had a key: set `llm.apiKey` after importing.')),
  },
  'must be an object with model, provider, baseUrl and apiKeyNeeded',
);

const AgentPartSchema = v.object(
  {
    name: NameSchema,
    description: v.nullable(DescriptionSchema),
    avatarUrl: v.nullable(httpUrlSchema('no credentials in a picture URL')),
    type: v.picklist(AGENT_TYPES, `must be one of ${AGENT_TYPES.join(', ')}`),
    hasMemory: v.boolean('must be true or false'),
    llm: LlmSchema,
  },
  'must be an object',
);

/** The prompt as `POST /prompts` takes it. */
const PromptPartSchema = CreatePromptSchema;

const TagPartSchema = v.object({ name: NameSchema, color: ColorSchema }, 'must be an object with name and color');

const ToolPartSchema = v.object(
  {
    name: NameSchema,
    type: v.picklist(TOOL_TYPES, `must be one of ${TOOL_TYPES.join(', ')}`),
    description: v.nullable(DescriptionSchema),
    metadata: v.pipe(JsonObjectSchema, v.description("The tool's settings without its secrets (checked by its type on import).")),
    secretFields: SecretFieldsSchema,
    /** An AGENT tool that called the exported agent itself: on import it calls the copy. */
    callsThisAgent: v.optional(v.boolean('must be true or false'), false),
    requiresApproval: v.pipe(v.boolean('must be true or false'), v.description("The agent's calls of it wait for a person's approval.")),
  },
  'must be an object',
);

const FileSchema = v.object(
  {
    name: NameSchema,
    contentType: Text(200),
    base64: v.pipe(
      v.string('must be a base64 string'),
      v.maxLength(Math.ceil(CARRY_LIMITS.fileBytes / 3) * 4, `must hold at most ${CARRY_LIMITS.fileBytes} bytes`),
      v.regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'),
    ),
  },
  'must be an object with name, contentType and base64',
);

/** A splitter as the API answers it (no other spellings: the file is written by the exporter). */
const SplitterPartSchema = v.pipe(
  v.object(
    {
      type: v.picklist(['character', 'recursive'], 'must be character or recursive'),
      chunk_size: SplitterSizeSchema(1),
      chunk_overlap: SplitterSizeSchema(0),
    },
    'must be an object or null',
  ),
  v.forward(
    v.check((splitter) => splitter.chunk_overlap < splitter.chunk_size, 'must be smaller than chunk_size'),
    ['chunk_overlap'],
  ),
);

const Page = v.pipe(
  v.number('must be a whole number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(1_000_000, 'must be at most 1000000'),
);

const DocumentPartSchema = v.pipe(
  v.object(
    {
      name: NameSchema,
      type: v.picklist(DOCUMENT_TYPES, `must be one of ${DOCUMENT_TYPES.join(', ')}`),
      url: v.pipe(
        v.nullable(httpUrlSchema('credentials are never exported')),
        v.description('Where the document is fetched from; null for an uploaded file carried in `file`.'),
      ),
      from_page: Page,
      to_page: v.nullable(Page),
      splitter: v.nullable(SplitterPartSchema),
      metadata: JsonObjectSchema,
      authorizationNeeded: v.pipe(
        v.boolean('must be true or false'),
        v.description('Credentials for the URL were removed: set them after importing.'),
      ),
      /** The agent's own `documentId`. */
      isAgentDocument: v.boolean('must be true or false'),
      /** Linked to the agent through an agent-document link. */
      linked: v.boolean('must be true or false'),
      file: v.pipe(
        v.optional(FileSchema),
        v.description(
          `An uploaded file's bytes (at most ${CARRY_LIMITS.fileBytes} bytes each, ${CARRY_LIMITS.filesBytes} in all): ` +
            'the import stores them as an upload, and `url` is not fetched.',
        ),
      ),
    },
    'must be an object',
  ),
  v.forward(
    v.check(
      (document) => document.url !== null || document.file !== undefined,
      'must be a URL (only a document with its file may have none)',
    ),
    ['url'],
  ),
);

const MessagePartSchema = v.object(
  {
    role: v.picklist(['user', 'assistant'], 'must be user or assistant'),
    content: Text(CARRY_LIMITS.messageChars),
  },
  'must be an object with role and content',
);

const SessionPartSchema = v.object(
  {
    id: SessionIdSchema,
    messages: bounded(MessagePartSchema, CARRY_LIMITS.messages, 'messages'),
  },
  'must be an object with id and messages',
);

/** One agent as a file: what `GET /agents/{id}/export` answers and `POST /agents/import` takes. */
export const AgentExportSchema = v.pipe(
  v.object(
    {
      format: v.literal(EXPORT_FORMAT, `must be "${EXPORT_FORMAT}"`),
      version: v.literal(EXPORT_VERSION, `must be ${EXPORT_VERSION}`),
      exportedAt: Text(64),
      agent: AgentPartSchema,
      prompt: v.nullable(PromptPartSchema),
      tags: bounded(TagPartSchema, CARRY_LIMITS.tags, 'tags'),
      tools: bounded(ToolPartSchema, CARRY_LIMITS.tools, 'tools'),
      documents: bounded(DocumentPartSchema, CARRY_LIMITS.documents, 'documents'),
      sessions: v.optional(bounded(SessionPartSchema, CARRY_LIMITS.sessions, 'sessions')),
      omitted: v.pipe(v.optional(bounded(Text(1000), 100, 'notes')), v.description('What the export left out, and why.')),
    },
    'must be an object',
  ),
  v.check(
    (file) => (file.sessions ?? []).reduce((sum, session) => sum + session.messages.length, 0) <= CARRY_LIMITS.messages,
    `must hold at most ${CARRY_LIMITS.messages} messages in all its sessions`,
  ),
  v.metadata({ title: 'Agent export', description: 'One agent of agent-service with what it uses, without secrets.' }),
);
export type AgentExport = v.InferOutput<typeof AgentExportSchema>;
export type ExportedTool = AgentExport['tools'][number];
export type ExportedDocument = AgentExport['documents'][number];

/** What an import creates (or, on a dry run, would), what needs a secret and what it left out. */
export const ImportResultSchema = v.strictObject({
  dryRun: v.boolean(),
  source: v.pipe(v.picklist(['agent-service', 'letta']), v.description('Which kind of file it was.')),
  agentId: v.pipe(v.nullable(v.string()), v.description('The new agent; null on a dry run.')),
  creates: v.strictObject({
    agent: v.string(),
    prompt: v.boolean(),
    tags: v.strictObject({ existing: v.array(v.string()), new: v.array(v.string()) }),
    tools: v.array(v.string()),
    documents: v.array(v.string()),
    sessions: v.number(),
    messages: v.number(),
  }),
  secretsNeeded: v.pipe(
    v.array(v.strictObject({ path: v.string(), message: v.string() })),
    v.description('What lost its secret on export: give it again (PATCH) for the agent to work as before.'),
  ),
  skipped: v.pipe(
    v.array(v.strictObject({ path: v.string(), reason: v.string() })),
    v.description('What the file holds that is not imported, and why.'),
  ),
});
export type ImportResult = v.InferOutput<typeof ImportResultSchema>;
