// Success responses: the `{ success, data }` envelope, and the `Link` header of a paged list.
import type { Context } from 'koa';
import type { Page } from '../lib/paging.js';

/** Answers `status` with `{ success: true, data }`. */
export function ok(ctx: Context, data: unknown, status = 200): void {
  ctx.status = status;
  ctx.body = { success: true, data };
}

/** Answers 201 with the new record. */
export function created(ctx: Context, data: unknown): void {
  ok(ctx, data, 201);
}

/** Answers a page of a list: the plain array, and `Link: <...>; rel="next"` when more rows exist. */
export function okPage<Row extends { id: string }>(ctx: Context, page: Page<Row>, present: (row: Row) => unknown): void {
  if (page.hasMore && page.rows.length > 0) {
    ctx.set('Link', `<${nextPageUrl(ctx, page.rows[page.rows.length - 1].id)}>; rel="next"`);
  }
  ok(ctx, page.rows.map(present));
}

/** This request's URL with `after` set: absolute when the request named a valid host, else relative. */
export function nextPageUrl(ctx: Context, afterId: string): string {
  const url = new URL(ctx.originalUrl, 'http://placeholder.invalid');
  url.searchParams.set('after', afterId);
  const relative = url.pathname + url.search;
  try {
    return new URL(relative, `${ctx.protocol}://${ctx.host}`).href;
  } catch {
    return relative;
  }
}
