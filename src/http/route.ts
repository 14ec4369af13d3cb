// One declaration per endpoint: method, path, auth, the valibot schemas of its query and body, the
// shape it answers and its handler, which returns what it answers and never writes the response
// itself. `mountRoutes` serves the routes in groups, each answering errors in its own format, and
// the OpenAPI document is built from the same list (src/openapi/document.ts), so the two cannot
// drift apart.
import Router from '@koa/router';
import * as v from 'valibot';
import type { AppContext, AppMiddleware, AppState, Caller } from './context.js';
import { validationFailed, type ErrorPresenter, type ErrorStatus } from './errors.js';
import { callerOf, type Authenticate } from './auth.js';
import { parse, parseBody, IdSchema, type AnySchema } from './validate.js';
import { SseAnswer, SseStream } from './sse.js';
import { answerJson, JSON_TYPE } from './json.js';
import type { Page } from '../lib/paging.js';

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

/** What a route answers on success. */
export type Success =
  /** `{ success: true, data }` where data has the shape `data`. */
  | { status: 200 | 201 | 202; description: string; data: AnySchema }
  /** A page of a list: `data` is an array of `item`, with `Link: <...>; rel="next"` while more exist. */
  | { status: 200; description: string; page: AnySchema }
  /** The body is the handler's value itself (or that value serialised), not an envelope: the OpenAPI document, the OpenAI-compatible API. */
  | { status: 200; description: string; raw: AnySchema }
  /**
   * A `text/event-stream` (the handler returns an SseAnswer that feeds it): `events` names each
   * event with what its `data:` line carries. With `json`, the handler may answer data of that shape
   * instead, as `{ success: true, data }`; errors before the stream starts are answered as any route's.
   */
  | {
      status: 200;
      description: string;
      stream: { events: Record<string, string> };
      json?: AnySchema;
      /** The handler may also answer `new Accepted(data)`: 202 with data of this shape (work that goes on after the answer). */
      accepted?: { description: string; data: AnySchema };
    }
  /** A stream, or the handler's value of shape `raw` as the whole body (the OpenAI-compatible API's answers). */
  | { status: 200; description: string; stream: { events: Record<string, string> }; raw: AnySchema }
  /**
   * Stored bytes (an uploaded file): the handler sets the body, its Content-Type and
   * Content-Disposition on `ctx` and returns RESPONSE_WRITTEN.
   */
  | { status: 200; description: string; file: true };

/** A 202 answer of a route whose success declares `accepted`: the work goes on after it. */
export class Accepted<T> {
  constructor(readonly data: T) {}
}

/**
 * What a handler returns when it wrote the response itself (`ctx.respond = false`): the MCP
 * endpoint hands the request to the MCP SDK, which answers in the protocol's own shapes.
 */
export const RESPONSE_WRITTEN: unique symbol = Symbol('response written');

/** What the handler returns for each kind of success. */
export type Answer<S extends Success> = S extends { file: true }
  ? typeof RESPONSE_WRITTEN
  : S extends { stream: object }
    ? | SseAnswer
      | (S extends { json: infer Data extends AnySchema }
          ? v.InferOutput<Data>
          : S extends { raw: infer Body extends AnySchema }
            ? v.InferOutput<Body>
            : never)
      | (S extends { accepted: { data: infer Data extends AnySchema } } ? Accepted<v.InferOutput<Data>> : never)
    : S extends { page: infer Item extends AnySchema }
      ? Page<v.InferOutput<Item>>
      : S extends { data: infer Data extends AnySchema }
        ? v.InferOutput<Data>
        : S extends { raw: infer Body extends AnySchema }
          ? string | v.InferOutput<Body> | typeof RESPONSE_WRITTEN
          : void;

/** What a handler is given: everything validated. */
export interface RouteInput<Auth extends boolean, Query, Body> {
  ctx: AppContext;
  caller: Auth extends true ? Caller : undefined;
  /** The path parameters (each checked as an id). */
  params: Record<string, string>;
  query: Query;
  body: Body;
}

/**
 * A route group's own error body, for the document: the schema (a named component) every error of
 * the route answers, and the status a request that fails validation gets (the service's own: 422).
 */
export interface ErrorFormat {
  component: string;
  schema: AnySchema;
  validationStatus: 400 | 422;
}

export interface RouteSpec<Auth extends boolean, Q extends AnySchema | undefined, B extends AnySchema | undefined, S extends Success> {
  method: HttpMethod;
  /** The path under /api/v1 (`:name` parameters), or an absolute path with `root: true`. */
  path: string;
  root?: boolean;
  operationId: string;
  summary: string;
  description?: string;
  /** The group the docs page shows it under. */
  tag: string;
  /** Needs a bearer token; the handler gets the caller. */
  auth: Auth;
  /** Schemas of path parameters that are not record ids (each one not named here is checked as an id). */
  params?: Record<string, AnySchema>;
  /** Middleware run after authentication and before validation (rate limits). */
  before?: AppMiddleware[];
  query?: Q;
  body?: B;
  /**
   * A `multipart/form-data` body the handler reads itself (from `ctx.req`), for the document: the
   * form fields' shape (objects sent as JSON text) and what the file part named `file` is.
   */
  form?: { fields: AnySchema; file: string };
  success: S;
  /** The error body when it is not the error envelope (its group's presenter answers it). */
  errorFormat?: ErrorFormat;
  /** Error statuses beyond those that follow from auth, body, query and path parameters. */
  errors?: ErrorStatus[];
  /**
   * Serve only requests this accepts; others go on to the next route with the same method and path.
   * The document shows such a route and the next one as one operation taking either body.
   */
  when?: (ctx: AppContext) => boolean;
  handler: (
    input: RouteInput<Auth, Q extends AnySchema ? v.InferOutput<Q> : undefined, B extends AnySchema ? v.InferOutput<B> : undefined>,
  ) => Answer<S> | Promise<Answer<S>>;
}

export type Route = RouteSpec<boolean, any, any, Success>;

/** Declares an endpoint. Only types it: mounting and documenting read the object as it is. */
export function defineRoute<
  Auth extends boolean,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
  S extends Success = Success,
>(spec: RouteSpec<Auth, Q, B, S>): Route {
  return spec as unknown as Route;
}

export const API_PREFIX = '/api/v1';

/** The path a route is served at. */
export const fullPath = (route: Route) => (route.root ? route.path : API_PREFIX + route.path);

/** The names of a path's parameters, in order. */
export const pathParameters = (path: string) => [...path.matchAll(/:(\w+)/g)].map((match) => match[1]);

/** This request's URL with `after` set: absolute when the request named a valid host, else relative. */
function nextPageUrl(ctx: AppContext, afterId: string): string {
  const url = new URL(ctx.originalUrl, 'http://placeholder.invalid');
  url.searchParams.set('after', afterId);
  const relative = url.pathname + url.search;
  try {
    return new URL(relative, `${ctx.protocol}://${ctx.host}`).href;
  } catch {
    return relative;
  }
}

/** One Koa middleware serving a route: authenticate, run `before`, validate, call the handler, answer. */
function serve(route: Route, authenticate: Authenticate): AppMiddleware {
  const parameters = pathParameters(route.path);
  const { success, when } = route;
  // A query parameter the route does not take is a mistake worth naming (a misspelt filter would
  // otherwise silently answer everything).
  const known = new Set(Object.keys((route.query as { entries?: object } | undefined)?.entries ?? {}));
  const respond = (ctx: AppContext, answer: unknown): void => {
    if (answer === RESPONSE_WRITTEN) return;
    if (answer instanceof SseAnswer) {
      answer.start(new SseStream(ctx, answer.keepAliveMs));
      return;
    }
    if (answer instanceof Accepted) {
      ctx.status = 202;
      answerJson(ctx, { success: true, data: answer.data });
      return;
    }
    ctx.status = success.status;
    if ('raw' in success) {
      ctx.type = JSON_TYPE;
      if (typeof answer === 'string') ctx.body = answer;
      else answerJson(ctx, answer);
    } else if ('page' in success) {
      const page = answer as Page<{ id: string }>;
      if (page.hasMore && page.rows.length > 0) ctx.set('Link', `<${nextPageUrl(ctx, page.rows[page.rows.length - 1].id)}>; rel="next"`);
      answerJson(ctx, { success: true, data: page.rows });
    } else {
      answerJson(ctx, { success: true, data: answer });
    }
  };
  // Synchronous unless the handler is: most handlers answer at once, without a promise of their own.
  const handle = (ctx: AppContext): Promise<void> | void => {
    const params: Record<string, string> = {};
    for (const name of parameters) params[name] = parse(route.params?.[name] ?? IdSchema, ctx.params[name], name) as string;
    if (route.query) {
      const unknown = Object.keys(ctx.query).filter((name) => !known.has(name));
      if (unknown.length > 0)
        throw validationFailed(unknown.map((name) => ({ path: `query.${name}`, message: 'is not a query parameter of this endpoint' })));
    }
    const query = route.query ? parse(route.query, ctx.query) : undefined;
    const body = route.body ? parseBody(ctx, route.body) : undefined;
    const caller = route.auth ? callerOf(ctx) : undefined;
    const answer = route.handler({ ctx, caller, params, query, body });
    if (answer instanceof Promise) return answer.then((value) => respond(ctx, value));
    respond(ctx, answer);
  };
  const before = route.before ?? [];
  // `before` is Koa middleware: each step gets the next as a promise.
  const run = (ctx: AppContext, index: number): unknown =>
    index === before.length ? handle(ctx) : before[index](ctx, () => Promise.resolve(run(ctx, index + 1)));
  // `next` is the next route matching this method and path: a route whose `when` declines passes on.
  // What throws synchronously here reaches the router's compose, which turns it into a rejection.
  return (ctx, next) => {
    if (when && !when(ctx)) return next();
    if (route.auth) ctx.state.caller = authenticate(ctx);
    return run(ctx, 0);
  };
}

/** Where routes are registered by path (the route table; a plain @koa/router in tests). */
export interface RouteRegistry {
  get(path: string, middleware: AppMiddleware): unknown;
}

/**
 * The routes, served by one @koa/router per first segment of the path, under /api/v1 for API
 * routes (`/api/v1/agents/:id/runs` is under `/api/v1/agents`, `/docs/:file` under `/docs`).
 * A @koa/router tests every pattern it holds against every request; with all 65 routes in one
 * router that was ~4 µs of each request, and a request now meets its own segment's patterns only
 * (13 at most). Every route of a path is in the same router, so a known path with the wrong
 * method still answers 405 with `Allow`. Matching stays case-insensitive, as @koa/router's is.
 */
export class RouteTable implements RouteRegistry {
  readonly #routers = new Map<string, Router<AppState>>();

  add(method: HttpMethod | 'all', path: string, middleware: AppMiddleware): void {
    const key = segmentOf(path);
    // A pattern in the first segment could match paths of other segments: the key needs it literal.
    if (/[:*(?]/.test(key)) throw new Error(`route ${path}: the first segment of a path must be literal`);
    let router = this.#routers.get(key);
    if (!router) this.#routers.set(key, (router = new Router<AppState>()));
    router[method](path, middleware);
  }

  get(path: string, middleware: AppMiddleware): void {
    this.add('get', path, middleware);
  }

  /** The middleware serving every route added so far. */
  middleware(): AppMiddleware {
    const served = new Map(
      [...this.#routers].map(([key, router]): [string, AppMiddleware] => {
        const [routes, allowedMethods] = [router.routes(), router.allowedMethods()];
        // A path under the segment that no route takes goes on to allowedMethods (405 or nothing).
        return [key, (ctx, next) => routes(ctx, () => allowedMethods(ctx, next))];
      }),
    );
    return function routeTable(ctx, next) {
      const serve = served.get(segmentOf(ctx.path));
      return serve ? serve(ctx, next) : next();
    };
  }
}

/** The router key of a path: up to the end of its first segment (after /api/v1/ for the API), lower case. */
function segmentOf(path: string): string {
  const lower = path.toLowerCase();
  const end = lower.indexOf('/', lower.startsWith(`${API_PREFIX}/`) ? API_PREFIX.length + 1 : 1);
  return end === -1 ? lower : lower.slice(0, end);
}

/**
 * Routes that answer errors in one format. A group with a `prefix` answers for every path under it
 * (`/v1`: `/v1` and `/v1/...`), unknown routes and wrong methods included, and all its routes must
 * be there; the one group without a prefix answers for every other path.
 */
export interface RouteGroup {
  prefix?: string;
  routes: Route[];
  presentError: ErrorPresenter;
}

/** The route table of `groups` (in order), and the error format of each path. */
export function mountRoutes(groups: RouteGroup[], authenticate: Authenticate): RouteTable & { presenterFor(path: string): ErrorPresenter } {
  const fallback = groups.filter((group) => group.prefix === undefined);
  if (fallback.length !== 1) throw new Error('exactly one route group has no prefix');
  const prefixed = groups.filter((group): group is RouteGroup & { prefix: string } => group.prefix !== undefined);
  const within = (path: string, prefix: string) => {
    const lower = path.toLowerCase();
    return lower === prefix.toLowerCase() || lower.startsWith(`${prefix.toLowerCase()}/`);
  };
  const groupOfPath = (path: string) => prefixed.find((group) => within(path, group.prefix)) ?? fallback[0];
  const table = new RouteTable();
  for (const group of groups) {
    for (const route of group.routes) {
      if (groupOfPath(fullPath(route)) !== group)
        throw new Error(`route ${route.operationId}: ${fullPath(route)} is outside its group's paths`);
      table.add(route.method, fullPath(route), serve(route, authenticate));
    }
  }
  return Object.assign(table, { presenterFor: (path: string) => groupOfPath(path).presentError });
}
