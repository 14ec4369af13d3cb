// The list, create, get, update and delete endpoints of a resource the caller owns, declared once
// from its store, its schemas and its presenter.
import * as v from 'valibot';
import type { Caller } from './context.js';
import type { ErrorStatus } from './errors.js';
import { notFound } from './errors.js';
import { defineRoute, type Route } from './route.js';
import { ListQuerySchema, pageRequest, type AnySchema } from './validate.js';
import type { AppMiddleware } from './context.js';
import type { Page, PageRequest } from '../lib/paging.js';

/** What every store of a per-user table offers (PATCH merges inside `update`, in one transaction). */
export interface OwnedStore<Row, Input, Change, Filter> {
  list(userId: string, page: PageRequest, filter: Filter): Page<Row>;
  seqOf(userId: string, id: string): number | undefined;
  get(userId: string, id: string): Row | undefined;
  create(userId: string, input: Input): Row;
  /** The changed row, or undefined when the caller has no such row. */
  update?(userId: string, id: string, change: Change): Row | undefined;
  /** The deleted row (or true), or undefined/false when the caller has no such row. */
  delete(userId: string, id: string): Row | boolean | undefined;
}

interface Verb {
  description?: string;
  errors?: ErrorStatus[];
}

export interface ResourceSpec<Row, S extends AnySchema, C extends AnySchema, U extends AnySchema, F extends v.ObjectEntries> {
  /** The collection path under /api/v1, e.g. `/tools`. */
  path: string;
  tag: string;
  /** Names for summaries, operation ids and the 404 message: `tool`, `Tool`, `Tools`, `Tool`. */
  names: { one: string; One: string; Many: string; what: string };
  schema: S;
  present: (row: Row, caller: Caller) => v.InferOutput<S>;
  store: OwnedStore<Row, v.InferOutput<C>, v.InferOutput<U>, Partial<Record<keyof F, string>>>;
  /** Middleware after authentication on every route (rate limits). */
  before?: AppMiddleware[];
  list?: Verb & { filters?: F };
  /**
   * `check` throws (or rejects) to refuse the input before anything is stored. `answer`: what
   * creation answers when it is more than the record (a secret shown this once).
   */
  create: Verb & {
    body: C;
    check?: (input: v.InferOutput<C>, caller: Caller) => void | Promise<void>;
    after?: (row: Row) => void;
    answer?: { schema: AnySchema; present: (row: Row, caller: Caller) => unknown };
  };
  /** false: the resource declares its own GET of one record. */
  get?: Verb | false;
  update?: Verb & {
    body: U;
    check?: (change: v.InferOutput<U>, caller: Caller, id: string) => void | Promise<void>;
    after?: (row: Row) => void;
  };
  /** What DELETE answers: the deleted record (api-tokens) or null (everything else). */
  delete: Verb & { answers: 'record' | 'null' };
}

/** `tool` → `a tool`, `agent` → `an agent`, `API token` → `an API token`. */
const article = (noun: string) => (/^[aeiouAEIOU]/.test(noun) ? `an ${noun}` : `a ${noun}`);

/** The five endpoints (four without `update`) of one resource. */
export function resourceRoutes<Row, S extends AnySchema, C extends AnySchema, U extends AnySchema, F extends v.ObjectEntries = {}>(
  spec: ResourceSpec<Row, S, C, U, F>,
): Route[] {
  const { path, tag, names, schema, present, store, before } = spec;
  const missing = () => notFound(names.what);
  const common = { tag, auth: true as const, before };
  const listQuery = v.object({ ...ListQuerySchema.entries, ...(spec.list?.filters ?? {}) });
  const routes: Route[] = [
    defineRoute({
      ...common,
      ...spec.list,
      method: 'get',
      path,
      operationId: `list${names.Many}`,
      summary: `List ${names.one}s`,
      query: listQuery,
      success: { status: 200, description: `A page of the caller's ${names.one}s, oldest first.`, page: schema },
      handler: ({ caller, query }) => {
        const { limit, after, ...filter } = query as { limit: number; after?: string } & Record<string, string | undefined>;
        const page = pageRequest({ limit, after }, (id) => store.seqOf(caller.id, id));
        const rows = store.list(caller.id, page, filter as Partial<Record<keyof F, string>>);
        return { rows: rows.rows.map((row) => present(row, caller)), hasMore: rows.hasMore };
      },
    }),
    defineRoute({
      ...common,
      description: spec.create.description,
      errors: spec.create.errors,
      method: 'post',
      path,
      operationId: `create${names.One}`,
      summary: `Create ${article(names.one)}`,
      body: spec.create.body,
      success: { status: 201, description: `The new ${names.one}.`, data: spec.create.answer?.schema ?? schema },
      handler: ({ caller, body }) => {
        const presentCreated = spec.create.answer?.present ?? present;
        const create = () => {
          const row = store.create(caller.id, body);
          spec.create.after?.(row);
          return presentCreated(row, caller);
        };
        const checked = spec.create.check?.(body, caller);
        return checked instanceof Promise ? checked.then(create) : create();
      },
    }),
  ];
  if (spec.get !== false) {
    routes.push(
      defineRoute({
        ...common,
        ...spec.get,
        method: 'get',
        path: `${path}/:id`,
        operationId: `get${names.One}`,
        summary: `Get ${article(names.one)}`,
        success: { status: 200, description: `The ${names.one}.`, data: schema },
        handler: ({ caller, params }) => {
          const row = store.get(caller.id, params.id);
          if (!row) throw missing();
          return present(row, caller);
        },
      }),
    );
  }
  const { update } = spec;
  if (update && store.update) {
    const updateRow = store.update.bind(store);
    routes.push(
      defineRoute({
        ...common,
        description: update.description,
        errors: update.errors,
        method: 'patch',
        path: `${path}/:id`,
        operationId: `update${names.One}`,
        summary: `Update ${article(names.one)}`,
        body: update.body,
        success: { status: 200, description: `The updated ${names.one}.`, data: schema },
        handler: ({ caller, params, body }) => {
          const change = () => {
            const row = updateRow(caller.id, params.id, body);
            if (!row) throw missing();
            update.after?.(row);
            return present(row, caller);
          };
          const checked = update.check?.(body, caller, params.id);
          return checked instanceof Promise ? checked.then(change) : change();
        },
      }),
    );
  }
  const answersRecord = spec.delete.answers === 'record';
  routes.push(
    defineRoute({
      ...common,
      description: spec.delete.description,
      errors: spec.delete.errors,
      method: 'delete',
      path: `${path}/:id`,
      operationId: `delete${names.One}`,
      summary: `Delete ${article(names.one)}`,
      success: answersRecord
        ? { status: 200, description: `The deleted ${names.one}.`, data: schema }
        : { status: 200, description: 'Deleted: data is null.', data: v.null() },
      handler: ({ caller, params }) => {
        const deleted = store.delete(caller.id, params.id);
        if (!deleted) throw missing();
        return answersRecord ? present(deleted as Row, caller) : null;
      },
    }),
  );
  return routes;
}
