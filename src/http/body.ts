// Reads JSON request bodies. A body in any other media type is refused with 415 before it is read
// (but where the route reads its own: an upload); a body over the limit is refused with 413 while
// streaming (never buffered whole); a string in it that is not well-formed Unicode is a 422 naming
// its field (see unicode.ts).
import type bodyParser from 'koa-bodyparser';
import { ApiError, invalidJson, payloadTooLarge, unsupportedMediaType } from './errors.js';
import type { AppContext, AppMiddleware } from './context.js';
import { assertWellFormedBody, mayHoldLoneSurrogate } from './unicode.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * `readsOwnBody`: requests whose route reads the body itself (an upload, as multipart/form-data):
 * they pass on unread, and the route streams the body from the request.
 */
export function jsonBody(limitBytes: number, readsOwnBody: (ctx: AppContext) => boolean = () => false): AppMiddleware {
  const options: bodyParser.Options & { onProtoPoisoning: 'remove' } = {
    enableTypes: ['json'],
    extendTypes: { json: JSON_TYPES },
    jsonLimit: String(limitBytes),
    // Accept any JSON value here so a body that is not an object is a 422 naming it, not a 400.
    strict: false,
    // co-body option: `__proto__` keys are dropped while parsing, so no parsed object carries one.
    onProtoPoisoning: 'remove',
  };
  // koa-bodyparser is imported with the first body, not at start-up: with co-body and qs it is
  // about 90 ms of CPU time before the service could answer its first request.
  let parseJson: Promise<ReturnType<typeof bodyParser>> | undefined;

  const readJson: AppMiddleware = async (ctx, next) => {
    if (!isJson(ctx.req.headers['content-type']) && !ctx.request.is(JSON_TYPES)) throw unsupportedMediaType();
    parseJson ??= import('koa-bodyparser').then(({ default: create }) => create(options));
    const parse = await parseJson;
    try {
      await parse(ctx, async () => {});
    } catch (error) {
      throw bodyReadError(error, limitBytes);
    }
    // An empty body is no body: creates with nothing required (an API token) take it as `{}`.
    if (ctx.request.body === '') ctx.request.body = undefined;
    if (mayHoldLoneSurrogate(ctx.request.rawBody)) assertWellFormedBody(ctx.request.body);
    return next();
  };
  // Most requests have no body: they pass straight on, without an async step of their own.
  return function jsonBodyMiddleware(ctx, next) {
    if (hasBody(ctx.req.headers) && !readsOwnBody(ctx)) return readJson(ctx, next);
    ctx.request.body = undefined;
    return next();
  };
}

/** The common spelling, `application/json` with or without parameters, told without parsing the header. */
const isJson = (type: string | undefined) => type !== undefined && (type === 'application/json' || type.startsWith('application/json;'));

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * Maps what the body reader (inflation, raw-body, co-body) throws to the error the client sees.
 * Everything it can throw is about the body the client sent, so everything maps to a 4xx; its
 * messages may quote the body, so none is passed on.
 */
function bodyReadError(error: unknown, limitBytes: number): ApiError {
  const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large') return payloadTooLarge(limitBytes);
  // An unknown Content-Encoding or charset (inflation and raw-body say 415).
  if (status === 415 || type === 'encoding.unsupported' || type === 'charset.unsupported') return unsupportedMediaType();
  // Not JSON, cut short, or not decompressible as its Content-Encoding claims (zlib errors).
  return invalidJson();
}
