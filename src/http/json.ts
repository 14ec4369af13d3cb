// How a JSON answer is written: serialised here, not left to Koa. For an object body Koa checks
// `instanceof Blob / ReadableStream / Response` (in the body setter and again when responding), and
// the first touch of Node's global `Response` loads its whole fetch implementation (undici): about
// 50 ms of CPU on the first request a process answers. A string body skips those checks. The
// bytes and headers are what Koa would send: the same JSON.stringify, `application/json;
// charset=utf-8` unless a JSON type was set already, the Content-Length of the serialised text.
import type { AppContext } from './context.js';

export function answerJson(ctx: AppContext, value: unknown): void {
  if (!/\bjson\b/i.test(ctx.type)) ctx.type = 'json';
  ctx.body = JSON.stringify(value);
}
