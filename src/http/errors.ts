// The one error type of the service. Handlers and stores throw these; src/http/envelope.ts is the
// only place that turns them (or anything else) into a response, in the format of the route group
// the request's path belongs to (src/http/route.ts).

/** Every error a client can get: its status, its stable code and when it happens. */
export const ERRORS = [
  {
    status: 400,
    code: 'invalid_json',
    when: 'The request body is not JSON, is cut short, or does not decompress as its Content-Encoding says.',
  },
  { status: 400, code: 'invalid_form', when: 'A multipart/form-data body (an uploaded document) that is malformed or cut short.' },
  {
    status: 401,
    code: 'unauthorized',
    when: 'No credential; an unknown, expired or revoked token, or one of a disabled account; a wrong sign-in.',
  },
  { status: 403, code: 'forbidden', when: 'Authenticated but not allowed (a body userId naming another user, a wrong current password).' },
  { status: 404, code: 'not_found', when: "An unknown route, or an id that does not exist or is another user's." },
  { status: 405, code: 'method_not_allowed', when: 'A known path with a method it does not serve (see the Allow header).' },
  { status: 409, code: 'conflict', when: 'A unique clash: email already registered, duplicate link, duplicate tag name.' },
  {
    status: 413,
    code: 'payload_too_large',
    when: 'The request body is over the limit (1 MiB by default; an uploaded file: UPLOAD_MAX_BYTES, 20 MiB by default).',
  },
  {
    status: 415,
    code: 'unsupported_media_type',
    when: 'A request body that is not application/json, or in an unknown encoding or charset.',
  },
  {
    status: 422,
    code: 'validation_failed',
    when: "A body, query or path parameter fails validation (a string that is not well-formed Unicode included), or a body reference is not one of the caller's records.",
  },
  { status: 429, code: 'rate_limited', when: 'Too many requests; wait for the Retry-After header (seconds).' },
  { status: 500, code: 'internal', when: 'Anything unexpected (logged on the server with the request id).' },
  {
    status: 502,
    code: 'upstream_error',
    when: "Running an agent, or listing a connection's models: the model server failed or refused (its status and message in words; never a key).",
  },
  { status: 502, code: 'max_steps', when: 'Running an agent: the run made RUN_MAX_STEPS model calls without reaching an answer.' },
  {
    status: 503,
    code: 'unavailable',
    when: 'The database is busy, too many password checks are waiting, or the service is shutting down; retry after the Retry-After header (seconds).',
  },
  {
    status: 503,
    code: 'storage_unavailable',
    when: 'The database file the service opened is no longer at its path (deleted, moved or replaced): writes are refused, since they would be lost, and /healthz answers the same until an operator restores the file and restarts the service.',
  },
  {
    status: 503,
    code: 'storage_full',
    when: 'The disk holding the database is full: nothing was written. /healthz answers the same until a write succeeds again; retry after the Retry-After header (seconds).',
  },
  { status: 504, code: 'upstream_timeout', when: 'Running an agent: the run did not finish within RUN_TIMEOUT_MS.' },
] as const;

export type ErrorStatus = (typeof ERRORS)[number]['status'];
export type ErrorCode = (typeof ERRORS)[number]['code'];

const STATUS_OF = new Map<ErrorCode, ErrorStatus>(ERRORS.map((error) => [error.code, error.status]));

/** One entry per bad field: `path` is the dotted field path ("" for the body itself). */
export interface FieldIssue {
  path: string;
  message: string;
}

/** An error a client may see: status, a stable snake_case code, a message and optional details. */
export class ApiError extends Error {
  readonly expose = true;

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** For 429: sent as the Retry-After header. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The error `code` with the status the table gives it. */
export const apiError = (code: ErrorCode, message: string, details?: unknown, retryAfterSeconds?: number) =>
  new ApiError(STATUS_OF.get(code) ?? 500, code, message, details, retryAfterSeconds);

/**
 * The body of an error answer in one format. The status and the headers (X-Request-Id,
 * Retry-After, Allow) are the same in every format; the error envelope is the service's own.
 */
export type ErrorPresenter = (error: ApiError) => unknown;

export const invalidJson = () => new ApiError(400, 'invalid_json', 'The request body could not be read as JSON.');

export const invalidForm = (message: string) => new ApiError(400, 'invalid_form', message);

export const unauthorized = (message = 'A valid API token is required.') => new ApiError(401, 'unauthorized', message);

export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);

export const notFound = (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found.`);

export const methodNotAllowed = (allowed: string) => new ApiError(405, 'method_not_allowed', `Method not allowed here; use ${allowed}.`);

export const conflict = (message: string) => new ApiError(409, 'conflict', message);

export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(413, 'payload_too_large', `The request body is larger than ${limitBytes} bytes.`);

export const unsupportedMediaType = () => new ApiError(415, 'unsupported_media_type', 'Send the request body as application/json.');

export const validationFailed = (details: FieldIssue[]) =>
  new ApiError(422, 'validation_failed', `Invalid ${details.map((issue) => issue.path || 'body').join(', ')}.`, details);

/** A body reference (promptId, tag id, ...) that is not one of the caller's records. */
export const unknownReference = (path: string, what: string) => validationFailed([{ path, message: `No ${what} with this id.` }]);

export const rateLimited = (retryAfterSeconds: number, what: string) =>
  new ApiError(429, 'rate_limited', `Too many ${what}; retry after ${retryAfterSeconds} s.`, undefined, retryAfterSeconds);

/** 503 with Retry-After: the service cannot take this request now (it is not the client's fault). */
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new ApiError(503, 'unavailable', message, undefined, retryAfterSeconds);

// Neither clears itself within a second: an operator has to free space or restore the file.
const STORAGE_RETRY_AFTER_S = 30;

/** Writes are refused: the database file this process opened is gone from its path. */
export const storageUnavailable = () =>
  new ApiError(
    503,
    'storage_unavailable',
    'The database file this service opened is no longer at its path, so nothing can be stored; see the service log.',
    undefined,
    STORAGE_RETRY_AFTER_S,
  );

/** A write failed because the disk is full. */
export const storageFull = () =>
  new ApiError(
    503,
    'storage_full',
    'The disk holding the database is full: nothing was stored. Try again later.',
    undefined,
    STORAGE_RETRY_AFTER_S,
  );

export const internal = () => new ApiError(500, 'internal', 'Internal server error.');
