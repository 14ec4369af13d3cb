// Errors of the OpenAI-compatible API, in OpenAI's shape `{ error: { message, type, param, code } }`,
// so that the official SDKs raise their own classes (BadRequestError, AuthenticationError,
// NotFoundError, RateLimitError, InternalServerError…). The status is the service's own but for a
// body that fails validation, which OpenAI answers 400 (see `openAIStatuses`).
import type { AppMiddleware } from '../http/context.js';
import { ApiError, type ErrorCode, type ErrorPresenter, type FieldIssue } from '../http/errors.js';
import { RunFailure } from '../runs/failures.js';

/** What OpenAI's error object says beyond the message. */
interface OpenAIDetail {
  type: string;
  param: string | null;
  code: string | null;
}

/** An error answered with OpenAI's `type`, `param` and `code` as given. */
export class OpenAIError extends ApiError {
  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    readonly openai: OpenAIDetail,
    retryAfterSeconds?: number,
    /**
     * A run was made and recorded (it failed, was cancelled, or waits for approval): answered with
     * `x-should-retry: false`, which the official SDKs obey, so that they do not run the agent (and
     * its tools) again on their own — by default they retry a 409 or a 5xx twice.
     */
    readonly ranAlready = false,
  ) {
    super(status, code, message, undefined, retryAfterSeconds);
  }
}

/** A field of the request at fault: 400 `invalid_request_error` naming it. */
export const badRequest = (param: string | null, message: string) =>
  new OpenAIError(400, 'validation_failed', message, { type: 'invalid_request_error', param, code: null });

export const modelNotFound = (model: string) =>
  new OpenAIError(404, 'not_found', `The model '${model}' does not exist or you do not have access to it.`, {
    type: 'invalid_request_error',
    param: 'model',
    code: 'model_not_found',
  });

export const responseNotFound = (id: string, param: string | null = null) =>
  new OpenAIError(404, 'not_found', `No response with id '${id}' was found (or it was not stored).`, {
    type: 'invalid_request_error',
    param,
    code: null,
  });

/** The OpenAI `type` and `code` of the service's own errors. */
function detailOf(error: ApiError): OpenAIDetail {
  if (error.status === 401) return { type: 'invalid_request_error', param: null, code: 'invalid_api_key' };
  if (error.status === 429) return { type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' };
  if (error.status >= 500) return { type: 'server_error', param: null, code: error.code };
  return { type: 'invalid_request_error', param: null, code: error.code };
}

export const presentOpenAIError: ErrorPresenter = (error) => ({
  error: { message: error.message, ...(error instanceof OpenAIError ? error.openai : detailOf(error)) },
});

/** The field a validation issue names, as OpenAI's `param` (the body's own path). */
const paramOf = (issue: FieldIssue | undefined) => (issue?.path ? issue.path : null);

/**
 * Route middleware (a route's `before`): a body or query that fails validation is answered 400, as
 * OpenAI does, naming the first field at fault in `param`; a prompt variable missing from
 * `metadata` is named there. An error of a run already made says the client must not retry it.
 */
export const openAIStatuses: AppMiddleware = async (ctx, next) => {
  try {
    await next();
  } catch (error) {
    if (error instanceof OpenAIError && error.ranAlready) ctx.set('x-should-retry', 'false');
    if (error instanceof ApiError && !(error instanceof OpenAIError) && error.status === 422) {
      const details = (error.details ?? []) as FieldIssue[];
      throw badRequest(
        paramOf(details[0]),
        `${error.message} ${details.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`.trim(),
      );
    }
    throw error;
  }
};

/**
 * The error of a run that could not run or failed: the agent missing is the model not found, a
 * prompt variable missing is a bad `metadata`, the model side failing a 502 or 504. `client` (a
 * plain request's): fires when its client has gone, which tells a run cancelled while the client
 * waits (409) from one cancelled because it left.
 */
export function runError(failure: unknown, model: string, client?: AbortSignal): never {
  if (!(failure instanceof RunFailure)) throw failure;
  const { code, message } = failure;
  const ran = (status: number, errorCode: ErrorCode, type: string, detailCode: string) =>
    new OpenAIError(status, errorCode, message, { type, param: null, code: detailCode }, undefined, true);
  switch (code) {
    case 'not_found':
      throw modelNotFound(model);
    case 'validation_failed': {
      const path = failure.details?.[0]?.path ?? null;
      const param = path?.startsWith('variables.') ? `metadata.${path.slice('variables.'.length)}` : path;
      throw badRequest(param, message);
    }
    case 'rate_limited':
      throw new OpenAIError(429, 'rate_limited', message, { type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' }, 1);
    case 'cancelled':
      // Cancelled (POST /api/v1/runs/{id}/cancel) while its client waits: the client is told.
      if (client && !client.aborted) throw ran(409, 'conflict', 'invalid_request_error', 'cancelled');
      // The client has gone: nobody reads this (499 in the access log, not counted as the service's failure).
      throw new OpenAIError(499, 'internal', message, { type: 'server_error', param: null, code: 'cancelled' });
    case 'upstream_error':
    case 'max_steps':
      throw ran(502, code, 'server_error', code);
    case 'upstream_timeout':
      throw ran(504, code, 'server_error', code);
    case 'conflict':
      // The run waits for a person to approve tool calls: the message says where to answer them.
      throw ran(409, 'conflict', 'invalid_request_error', 'requires_action');
    case 'unavailable':
      throw new OpenAIError(503, code, message, { type: 'server_error', param: null, code }, 1);
    default:
      throw new OpenAIError(500, 'internal', message, { type: 'server_error', param: null, code: 'internal' });
  }
}

/** A run's failure as the error object of a stream (chat chunks) or a failed response. */
export const streamError = (code: string, message: string) => ({
  message,
  type: code === 'rate_limited' ? 'rate_limit_error' : 'server_error',
  code,
});
