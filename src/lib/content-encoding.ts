// Undoing an HTTP answer's Content-Encoding (gzip, deflate, br), for the two places that read
// answers off node:http themselves: the guarded fetch and the model call.
import type { IncomingMessage } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { zlib } from './builtins.js';

/** The Accept-Encoding those callers send: every encoding `decodedBody` undoes. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/** The answer's Content-Encoding, trimmed and lower-cased; `identity` when it names none. */
export function contentEncoding(response: IncomingMessage): string {
  return String(response.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
}

/**
 * The answer's body with its Content-Encoding undone (the body itself when it has none), or
 * undefined for an encoding not in ACCEPT_ENCODING. An error of the answer reaches the reader.
 */
export function decodedBody(response: IncomingMessage): Readable | undefined {
  const encoding = contentEncoding(response);
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib().createGunzip()
      : encoding === 'deflate'
        ? zlib().createInflate()
        : encoding === 'br'
          ? zlib().createBrotliDecompress()
          : encoding === 'identity' || encoding === ''
            ? null
            : undefined;
  if (decoder === undefined) return undefined;
  if (decoder === null) return response;
  return pipeline(response, decoder, () => {});
}
