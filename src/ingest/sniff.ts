// What an uploaded file is: its document type told from its first bytes, its name and the media
// type the client gave it, and a check that its content is what that type reads (so a mismatch is
// refused when it is uploaded, with the reason, instead of failing ingestion later).
import { looksLikeCaptions, looksLikeHtml, startsWithPdf, type DocumentType } from './extract.js';

/** How much of the start of a file detection and the content check read. */
export const HEAD_BYTES = 8192;

const BY_EXTENSION: Record<string, DocumentType> = {
  txt: 'TXT',
  text: 'TXT',
  md: 'TXT',
  markdown: 'TXT',
  csv: 'CSV',
  tsv: 'CSV',
  html: 'URL',
  htm: 'URL',
  xhtml: 'URL',
  pdf: 'PDF',
  vtt: 'VIDEO',
  srt: 'VIDEO',
};

const BY_MEDIA_TYPE: Record<string, DocumentType> = {
  'text/plain': 'TXT',
  'text/markdown': 'TXT',
  'text/x-markdown': 'TXT',
  'text/csv': 'CSV',
  'text/tab-separated-values': 'CSV',
  'text/html': 'URL',
  'application/xhtml+xml': 'URL',
  'application/pdf': 'PDF',
  'text/vtt': 'VIDEO',
  'application/x-subrip': 'VIDEO',
  'text/srt': 'VIDEO',
};

/** The media type each type is served back as when the client's own says nothing (octet-stream). */
const MEDIA_TYPE_OF: Record<DocumentType, string> = {
  TXT: 'text/plain; charset=utf-8',
  CSV: 'text/csv; charset=utf-8',
  URL: 'text/html; charset=utf-8',
  PDF: 'application/pdf',
  VIDEO: 'text/vtt; charset=utf-8',
};
const SRT_MEDIA_TYPE = 'application/x-subrip; charset=utf-8';

export const mediaTypeOf = (contentType: string) => contentType.split(';')[0].trim().toLowerCase();

const extensionOf = (filename: string) => /\.([A-Za-z0-9]{1,10})$/.exec(filename)?.[1].toLowerCase();

/** A NUL byte in the head: binary, unless the text is UTF-16 (told by its byte-order mark). */
function isBinary(head: Uint8Array): boolean {
  const utf16 = (head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff);
  return !utf16 && head.includes(0);
}

const headText = (head: Uint8Array) => Buffer.from(head).toString('utf8');

/**
 * The document type of a file: a PDF by its signature; else by its extension, else by its media
 * type; else captions, a web page or plain text by its first bytes. Undefined when none fits.
 */
export function detectType(head: Uint8Array, filename: string, contentType: string): DocumentType | undefined {
  if (startsWithPdf(head)) return 'PDF';
  // text/plain is also what a part without a Content-Type reads as (multipart's default): it says nothing the sniff cannot.
  const media = mediaTypeOf(contentType);
  const known = BY_EXTENSION[extensionOf(filename) ?? ''] ?? (media === 'text/plain' ? undefined : BY_MEDIA_TYPE[media]);
  if (known) return known;
  if (isBinary(head)) return undefined;
  const text = headText(head);
  if (looksLikeCaptions(text)) return 'VIDEO';
  if (looksLikeHtml(text)) return 'URL';
  return 'TXT';
}

/**
 * Why a file cannot be a document of `type`, by its first bytes; undefined when it can. Text that
 * begins with markup is refused as TXT or CSV only when the file says it is a web page (its media
 * type or extension): Markdown often begins with HTML.
 */
export function contentMismatch(type: DocumentType, head: Uint8Array, filename: string, contentType: string): string | undefined {
  const pdf = startsWithPdf(head);
  if (type === 'PDF') return pdf ? undefined : 'the file is not a PDF (it does not begin with %PDF-)';
  if (pdf) return 'the file is a PDF; give the type PDF';
  if (isBinary(head)) return 'the file is not text (it holds binary data)';
  const text = headText(head);
  if (type === 'VIDEO' && !looksLikeCaptions(text)) return 'transcripts must be given as WebVTT or SRT captions';
  const saysHtml = BY_EXTENSION[extensionOf(filename) ?? ''] === 'URL' || BY_MEDIA_TYPE[mediaTypeOf(contentType)] === 'URL';
  if ((type === 'TXT' || type === 'CSV') && saysHtml && looksLikeHtml(text)) return 'the file is a web page (HTML); give the type URL';
  return undefined;
}

/**
 * The media type a file is served back as: the client's when it names the document's type
 * (`text/markdown` for TXT, say; a charset parameter kept), else the usual one of that type.
 */
export function servedMediaType(type: DocumentType, contentType: string, head: Uint8Array): string {
  const media = mediaTypeOf(contentType);
  if (BY_MEDIA_TYPE[media] !== type) {
    if (
      type === 'VIDEO' &&
      !headText(head)
        .replace(/^\uFEFF/, '')
        .startsWith('WEBVTT')
    )
      return SRT_MEDIA_TYPE;
    return MEDIA_TYPE_OF[type];
  }
  const charset = /;\s*charset\s*=\s*"?([A-Za-z0-9._-]{1,40})"?/i.exec(contentType)?.[1];
  return charset ? `${media}; charset=${charset.toLowerCase()}` : media;
}
