// Request bodies of `/documents`.
import * as v from 'valibot';
import { JsonObjectSchema, NameSchema, noArrays } from '../http/validate.js';

export const DOCUMENT_TYPES = ['TXT', 'PDF', 'VIDEO', 'CSV', 'URL'] as const;

const MAX_PAGE = 1_000_000;

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    // Credentials belong in `authorization` (sealed, never returned), not in the URL (returned as is).
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

const UrlSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.check(isHttpUrl, 'must be an absolute http(s) URL without credentials (put those in authorization)'),
);

const PageSchema = v.pipe(
  v.number('must be a whole number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(MAX_PAGE, `must be at most ${MAX_PAGE}`),
);

/** The interface documents `to_page` as a string: a numeric string is read as its number. */
const ToPageSchema = v.pipe(
  v.union([v.number(), v.string()], 'must be a whole number or a numeric string'),
  v.transform((value) => (typeof value === 'string' && /^\s*\d{1,7}\s*$/.test(value) ? Number(value) : value)),
  PageSchema,
);

const SPLITTER_TYPES: Record<string, 'character' | 'recursive'> = {
  character: 'character',
  CharacterTextSplitter: 'character',
  recursive: 'recursive',
  RecursiveCharacterTextSplitter: 'recursive',
};

const SizeSchema = (min: number) =>
  v.pipe(v.number('must be a whole number'), v.integer('must be a whole number'), v.minValue(min, `must be at least ${min}`), v.maxValue(100_000, 'must be at most 100000'));

/**
 * A text splitter. `type` defaults to character (LangChain's CharacterTextSplitter); chunk_size to
 * 1000; chunk_overlap to 200, or a fifth of a smaller chunk_size, and must stay below chunk_size.
 */
export const SplitterSchema = v.pipe(
  noArrays(v.object(
    {
      type: v.optional(
        v.pipe(
          v.picklist(Object.keys(SPLITTER_TYPES), `must be one of ${Object.keys(SPLITTER_TYPES).join(', ')}`),
          v.transform((name) => SPLITTER_TYPES[name]),
        ),
        'character',
      ),
      chunk_size: v.optional(SizeSchema(1), 1000),
      chunk_overlap: v.optional(SizeSchema(0)),
    },
    'must be an object or null',
  )),
  v.transform((splitter) => ({
    type: splitter.type,
    chunk_size: splitter.chunk_size,
    chunk_overlap: splitter.chunk_overlap ?? Math.min(200, Math.floor(splitter.chunk_size / 5)),
  })),
  v.forward(
    v.check((splitter) => splitter.chunk_overlap < splitter.chunk_size, 'must be smaller than chunk_size'),
    ['chunk_overlap'],
  ),
);
export type Splitter = v.InferOutput<typeof SplitterSchema>;

const fields = {
  name: NameSchema,
  type: v.picklist(DOCUMENT_TYPES, `must be one of ${DOCUMENT_TYPES.join(', ')}`),
  url: UrlSchema,
  from_page: PageSchema,
  to_page: v.nullable(ToPageSchema),
  /** Access credentials for the URL: stored, never returned. */
  authorization: v.nullable(JsonObjectSchema),
  splitter: v.nullable(SplitterSchema),
  metadata: JsonObjectSchema,
};

export const CreateDocumentSchema = v.object({
  ...fields,
  from_page: v.optional(fields.from_page, 1),
  to_page: v.optional(fields.to_page, null),
  authorization: v.optional(fields.authorization, null),
  splitter: v.optional(fields.splitter, null),
  metadata: v.optional(fields.metadata, {}),
});
export const UpdateDocumentSchema = v.partial(v.object(fields));
export type DocumentInput = v.InferOutput<typeof CreateDocumentSchema>;
