// Reads JSON request bodies. A body in any other media type is refused with 415 before it is read;
// a body over the limit is refused with 413 while streaming (never buffered whole).
import bodyParser from 'koa-bodyparser';
import { ApiError, invalidJson, payloadTooLarge, unsupportedMediaType } from './errors.js';
import type { AppMiddleware } from './context.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

export function jsonBody(limitBytes: number): AppMiddleware {
  const options: bodyParser.Options & { onProtoPoisoning: 'remove' } = {
    enableTypes: ['json'],
    extendTypes: { json: JSON_TYPES },
    jsonLimit: String(limitBytes),
    // Accept any JSON value here so a body that is not an object is a 422 naming it, not a 400.
    strict: false,
    // co-body option: `__proto__` keys are dropped while parsing, so no parsed object carries one.
    onProtoPoisoning: 'remove',
  };
  const parseJson = bodyParser(options);

  return async function jsonBodyMiddleware(ctx, next) {
    if (!hasBody(ctx.req.headers)) {
      ctx.request.body = undefined;
      return next();
    }
    if (!ctx.request.is(JSON_TYPES)) throw unsupportedMediaType();
    try {
      await parseJson(ctx, async () => {});
    } catch (error) {
      throw bodyReadError(error, limitBytes);
    }
    // An empty body is no body: creates with nothing required (an API token) take it as `{}`.
    if (ctx.request.body === '') ctx.request.body = undefined;
    return next();
  };
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

/** Maps what the body reader (raw-body, co-body) throws to the error the client sees. */
function bodyReadError(error: unknown, limitBytes: number): unknown {
  const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large') return payloadTooLarge(limitBytes);
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return unsupportedMediaType();
  if (type === 'request.aborted' || type === 'request.size.invalid') {
    return new ApiError(400, 'bad_request', 'The request body could not be read completely.');
  }
  // co-body: a JSON syntax error, with status 400 (its message may quote the body: never pass it on).
  if (error instanceof SyntaxError || status === 400) return invalidJson();
  return error;
}
