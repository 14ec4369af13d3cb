// A server-sent-events response: named JSON events (or raw `data:` lines for the older predict
// format), a comment line at an interval so proxies keep an idle stream open, and a signal that
// fires when the client goes away before the stream ended.
import { PassThrough } from 'node:stream';
import type { AppContext } from '../http/context.js';

export const KEEP_ALIVE_MS = 15_000;

export class SseStream {
  private readonly body = new PassThrough();
  private readonly timer: NodeJS.Timeout;
  private ended = false;
  private readonly gone = new AbortController();
  /** Fires when the client disconnects before `end()`. */
  readonly clientGone: AbortSignal = this.gone.signal;

  /** Starts the response: 200, text/event-stream, and the body this stream writes. */
  constructor(ctx: AppContext, keepAliveMs = KEEP_ALIVE_MS, headers: Record<string, string> = {}) {
    ctx.status = 200;
    ctx.type = 'text/event-stream; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Accel-Buffering', 'no'); // nginx: pass events through as they come
    for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
    ctx.body = this.body;
    ctx.res.once('close', () => {
      if (!this.ended) {
        this.ended = true;
        clearInterval(this.timer);
        this.gone.abort();
      }
    });
    ctx.req.socket.setNoDelay(true);
    this.timer = setInterval(() => this.write(': keep-alive\n\n'), keepAliveMs);
    this.timer.unref();
    this.write(': stream open\n\n');
  }

  /** True once the stream ended or the client went away. */
  get closed(): boolean {
    return this.ended;
  }

  /** One named event whose data is `data` as JSON. */
  event(name: string, data: unknown): void {
    this.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** One unnamed event whose data is `text` as is, a `data:` line per line of it. */
  data(text: string): void {
    this.write(`${text.split(/\r\n|\r|\n/).map((line) => `data: ${line}`).join('\n')}\n\n`);
  }

  /** A named event whose data is plain text. */
  textEvent(name: string, text: string): void {
    this.write(`event: ${name}\n${text.split(/\r\n|\r|\n/).map((line) => `data: ${line}`).join('\n')}\n\n`);
  }

  /** Ends the response. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.timer);
    this.body.end();
  }

  private write(text: string): void {
    if (!this.ended) this.body.write(text);
  }
}
