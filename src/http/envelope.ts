// The outermost middleware: gives every request an id, answers every failure (the only place errors
// become responses) in the format of the request's route group — the error envelope unless a group
// says otherwise —, sets the headers every response carries and writes the access log line.
// Nothing from an unexpected error (stack, SQL, secrets) reaches the client.
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { ApiError, internal, methodNotAllowed, notFound, type ErrorPresenter } from './errors.js';
import type { AppMiddleware } from './context.js';
import { answerJson } from './json.js';
import type { Logger } from '../lib/log.js';
import { isUniqueViolation } from '../lib/sqlite.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `{ success: false, data: null, error: { code, message, details? } }`: the service's error format. */
export const presentEnvelope: ErrorPresenter = (error) => ({
  success: false,
  data: null,
  error: { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) },
});

interface EnvelopeOptions {
  logRequests: boolean;
  /** The error format of a request's path (its route group's). */
  presenterFor: (path: string) => ErrorPresenter;
}

export function envelope(log: Logger, options: EnvelopeOptions): AppMiddleware {
  return async function envelopeMiddleware(ctx, next) {
    const started = options.logRequests ? performance.now() : 0;
    const incoming = ctx.req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    // Straight onto the response (nothing is sent yet): Koa's ctx.set adds only checks for later.
    const { res } = ctx;
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Responses carry tokens, users and private records: no cache may keep them.
    res.setHeader('Cache-Control', 'no-store');

    try {
      await next();
      // The router answers a plain OPTIONS with 200, an Allow header and no body: say "no content".
      if (ctx.method === 'OPTIONS' && ctx.status === 200 && !ctx.body) ctx.status = 204;
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw notFound('Route');
        if (ctx.status === 405 || ctx.status === 501) throw methodNotAllowed(ctx.response.get('Allow'));
      }
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500) {
        log.error({ msg: 'request failed', requestId, method: ctx.method, path: ctx.path, error: describe(thrown) });
      }
      // Bearer tokens are the one credential of the API (RFC 6750): MCP clients read this to know it.
      if (error.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
      if (error.status === 503) ctx.set('Retry-After', '1');
      if (error.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(error.retryAfterSeconds));
      ctx.status = error.status;
      answerJson(ctx, options.presenterFor(ctx.path)(error));
    } finally {
      if (options.logRequests) {
        log.info({
          msg: 'request',
          requestId,
          method: ctx.method,
          route: (ctx as { _matchedRoute?: string })._matchedRoute ?? null,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 100) / 100,
          userId: ctx.state.caller?.id ?? null,
        });
      }
    }
  };
}

/** Maps anything thrown to the error a client sees. */
function toApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  if (isUniqueViolation(thrown)) return new ApiError(409, 'conflict', 'A record with these values already exists.');
  if (thrown instanceof Database.SqliteError) {
    if (thrown.code === 'SQLITE_BUSY' || thrown.code === 'SQLITE_LOCKED') {
      return new ApiError(503, 'unavailable', 'The database is busy; try again.');
    }
    return internal();
  }
  return internal();
}

/** What the server log keeps of an unexpected error: its class, code and stack, never a request body. */
function describe(thrown: unknown): Record<string, unknown> {
  if (thrown instanceof Error) {
    return { name: thrown.name, code: (thrown as { code?: unknown }).code, message: thrown.message, stack: thrown.stack };
  }
  return { value: String(thrown) };
}
