// How a JSON answer is written: serialised here, not left to Koa, with its full media type. For an
// object body Koa checks `instanceof Blob / ReadableStream / Response` (in the body setter and again
// when responding), and the first touch of Node's global `Response` loads its whole fetch
// implementation (undici): about 50 ms of CPU on the first request a process answers. A string
// body skips those checks. And a type given in full (with its charset) is set as it is, where
// `json` would be looked up in the media type table, which the build loads at its first lookup
// (scripts/bundle.ts). The bytes and headers are what Koa would send: the same JSON.stringify,
// `application/json; charset=utf-8` unless a JSON type was set already, the Content-Length of the
// serialised text.
import type { AppContext } from './context.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

export function answerJson(ctx: AppContext, value: unknown): void {
  if (!/\bjson\b/i.test(ctx.type)) ctx.type = JSON_TYPE;
  ctx.body = JSON.stringify(value);
}
