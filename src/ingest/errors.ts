// The one error type of ingestion: a stable `code` for programs and a message written for the
// person who owns the document (it becomes the document's `error`). Messages never hold credentials.

export type IngestErrorCode =
  | 'bad_url' // not an absolute http(s) URL, or a redirect to one that is not
  | 'bad_authorization' // the authorization object has a shape we do not understand
  | 'refused_address' // the host resolves to a loopback, private or otherwise internal address
  | 'dns' // the host name could not be resolved
  | 'network' // connection refused/reset, TLS failure, …
  | 'http_status' // the server answered something other than 2xx
  | 'too_many_redirects'
  | 'too_large' // over the size cap
  | 'timeout'
  | 'unsupported' // content we cannot read as the document's type
  | 'parse' // content of the right kind that could not be parsed
  | 'page_range' // from_page/to_page beyond the document
  | 'no_text'; // a document with no extractable text (e.g. a scanned PDF)

/** An ingestion failure whose `message` is safe and meant to be shown to the document's owner. */
export class IngestError extends Error {
  override readonly name = 'IngestError';
  constructor(
    readonly code: IngestErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** True when `error` is an IngestError (also across module copies). */
export function isIngestError(error: unknown): error is IngestError {
  return error instanceof IngestError || (error instanceof Error && error.name === 'IngestError' && 'code' in error);
}

/** A byte count as people read it: "20 MiB", "1.5 KiB", "512 bytes". */
export function formatBytes(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB'];
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  let value = bytes;
  let unit = 'bytes';
  for (const next of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  const rounded = Math.round(value * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1)} ${unit}`;
}

/** A duration as people read it: "30 seconds", "1.5 seconds", "250 ms". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const seconds = Math.round(ms / 100) / 10;
  return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
}
