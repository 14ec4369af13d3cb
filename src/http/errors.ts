// The one error type of the service. Handlers and stores throw these; src/http/envelope.ts is the
// only place that turns them (or anything else) into a response.

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
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** For 429: sent as the Retry-After header. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const invalidJson = () => new ApiError(400, 'invalid_json', 'The request body could not be read as JSON.');

export const unauthorized = (message = 'A valid API token is required.') =>
  new ApiError(401, 'unauthorized', message);

export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);

export const notFound = (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found.`);

export const methodNotAllowed = (allowed: string) =>
  new ApiError(405, 'method_not_allowed', `Method not allowed here; use ${allowed}.`);

export const conflict = (message: string) => new ApiError(409, 'conflict', message);

export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(413, 'payload_too_large', `The request body is larger than ${limitBytes} bytes.`);

export const unsupportedMediaType = () =>
  new ApiError(415, 'unsupported_media_type', 'Send the request body as application/json.');

export const validationFailed = (details: FieldIssue[]) =>
  new ApiError(
    422,
    'validation_failed',
    `Invalid ${details.map((issue) => issue.path || 'body').join(', ')}.`,
    details,
  );

/** A body reference (promptId, tag id, ...) that is not one of the caller's records. */
export const unknownReference = (path: string, what: string) =>
  validationFailed([{ path, message: `No ${what} with this id.` }]);

export const rateLimited = (retryAfterSeconds: number, what: string) =>
  new ApiError(429, 'rate_limited', `Too many ${what}; retry after ${retryAfterSeconds} s.`, undefined, retryAfterSeconds);

/** 503 with Retry-After: the service cannot take this request now (it is not the client's fault). */
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new ApiError(503, 'unavailable', message, undefined, retryAfterSeconds);

export const internal = () => new ApiError(500, 'internal', 'Internal server error.');
