// A server-sent-events response: named JSON events (or raw `data:` lines for the older predict
// format), a comment line at an interval so proxies keep an idle stream open, and a signal that
// fires when the client goes away before the stream ended — or stops reading it: once more than
// STREAM_BUFFER_BYTES wait to be sent, the stream is cut off (what feeds it is told why, to stop)
// and only its last event is still sent, so a client that never reads holds a bounded amount of
// memory. A stream outlives the check of the token its request came with: while it is open, that
// token is watched (src/api-tokens/watch.ts), and once it stops working the stream ends with an
// error event and what feeds it is told, as when the client leaves. Route serving opens it for a
// route that answers a declared stream (src/http/route.ts).
import { PassThrough } from 'node:stream';
import type { AppContext, Caller } from './context.js';

export const KEEP_ALIVE_MS = 15_000;
/** How much of a stream may wait for a client that does not read before it is cut off. */
const STREAM_BUFFER_BYTES = 1024 * 1024;
/** How long a cut-off stream's last bytes may wait for the client before its connection is closed. */
const CUT_OFF_GRACE_MS = 30_000;

/** One event: `data` as `data:` lines (one per line of it), named when `name` is given, numbered when `id` is. */
export function formatEvent(name: string | undefined, data: string, id?: number): string {
  const lines = data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n');
  return `${id === undefined ? '' : `id: ${id}\n`}${name === undefined ? '' : `event: ${name}\n`}${lines}\n\n`;
}

/** Why a stream's `clientGone` fired: the client left, or stopped reading (`unreadBytes` waited). */
export class ClientGone extends Error {
  constructor(readonly unreadBytes?: number) {
    super(
      unreadBytes === undefined
        ? 'The client disconnected.'
        : `The client did not read the stream: more than ${unreadBytes} bytes waited to be sent.`,
    );
    this.name = 'AbortError';
  }
}

/** Why a stream's `clientGone` fired: the API token the stream was opened with stopped working. */
export class CredentialLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbortError';
  }
}

/** What watches the API token of each open stream (src/api-tokens/watch.ts). */
export interface CredentialWatch {
  /**
   * Watches `caller`'s token for one open stream: `lost` is called, with why, once it stops
   * working. Returns what ends the watch (the stream ended first).
   */
  hold(caller: Caller, lost: (message: string) => void): () => void;
}

const watches = new WeakMap<AppContext, CredentialWatch>();

/** Authentication names what watches the token of `ctx`'s request, for a stream answering it. */
export function watchStreamOf(ctx: AppContext, watch: CredentialWatch): void {
  watches.set(ctx, watch);
}

/** The last event of a stream whose token stopped working, unless its format says it otherwise. */
const unauthorizedEvent = (message: string) => [formatEvent('error', JSON.stringify({ code: 'unauthorized', message }))];

export class SseStream {
  private readonly body = new PassThrough();
  private readonly timer: NodeJS.Timeout;
  private ended = false;
  private cutOff = false;
  private readonly gone = new AbortController();
  /** Ends the watch of the stream's token (nothing for a stream of a request without one). */
  private readonly unwatch: () => void = () => {};
  private refusal = unauthorizedEvent;
  /**
   * Fires when the client disconnects before `end()`, or stopped reading (a ClientGone saying
   * which), or when the stream's token stopped working (a CredentialLost, after the stream ended).
   */
  readonly clientGone: AbortSignal = this.gone.signal;

  /** Starts the response: 200, text/event-stream, and the body this stream writes. */
  constructor(
    private readonly ctx: AppContext,
    keepAliveMs = KEEP_ALIVE_MS,
    private readonly maxBufferedBytes = STREAM_BUFFER_BYTES,
  ) {
    ctx.status = 200;
    ctx.type = 'text/event-stream; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Accel-Buffering', 'no'); // nginx: pass events through as they come
    ctx.body = this.body;
    ctx.res.once('close', () => {
      if (!this.ended) {
        this.ended = true;
        clearInterval(this.timer);
        this.unwatch();
        this.gone.abort(new ClientGone());
      }
    });
    ctx.req.socket.setNoDelay(true);
    // A keep-alive is only needed while nothing else waits to be sent.
    this.timer = setInterval(() => {
      if (this.buffered() === 0) this.write(': keep-alive\n\n');
    }, keepAliveMs);
    this.timer.unref();
    const watch = watches.get(ctx);
    const caller = ctx.state.caller;
    if (watch && caller) this.unwatch = watch.hold(caller, (message) => this.credentialLost(message));
    this.write(': stream open\n\n');
  }

  /**
   * How the stream's format says that its token stopped working: the events sent last (by default
   * an `error` event `{ code: "unauthorized", message }`).
   */
  sayRefusal(say: (message: string) => string[]): void {
    this.refusal = say;
  }

  /** One named event whose data is `data` as JSON. */
  event(name: string, data: unknown): void {
    this.write(formatEvent(name, JSON.stringify(data)));
  }

  /** One event whose data is `text` as is (a `data:` line per line of it), named when `name` is given. */
  text(text: string, name?: string): void {
    this.write(formatEvent(name, text));
  }

  /** Sends `formatted` (events made by formatEvent) as they are. */
  send(formatted: string): void {
    this.write(formatted);
  }

  /** Resolves once at most half of what may wait for the client waits (or the stream ended): room to send a long replay in parts. */
  async room(): Promise<void> {
    while (!this.ended && !this.cutOff && this.buffered() > this.maxBufferedBytes / 2) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The stream ended (or its client went away). */
  get closed(): boolean {
    return this.ended || this.cutOff;
  }

  /** Ends the response with `last` (formatted events), which are sent even after a cut-off. */
  end(...last: string[]): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.timer);
    this.unwatch();
    for (const text of last) this.body.write(text);
    this.body.end();
    if (this.cutOff) {
      // A client that never reads would hold the connection (and these bytes) for ever.
      const grace = setTimeout(() => this.ctx.res.destroy(), CUT_OFF_GRACE_MS);
      grace.unref();
      this.ctx.res.once('close', () => clearTimeout(grace));
    }
  }

  /**
   * The stream's token stopped working: the stream ends with the format's refusal, then what feeds
   * it is told (a follower stops following; a run that lives only for this stream is cancelled, as
   * when its client leaves).
   */
  private credentialLost(message: string): void {
    if (this.ended) return;
    this.end(...this.refusal(message));
    this.gone.abort(new CredentialLost(message));
  }

  /** Bytes written but not yet taken by the connection. */
  private buffered(): number {
    return this.body.writableLength + this.body.readableLength;
  }

  private write(text: string): void {
    if (this.ended || this.cutOff) return;
    if (this.buffered() > this.maxBufferedBytes) {
      this.cutOff = true;
      clearInterval(this.timer);
      this.gone.abort(new ClientGone(this.maxBufferedBytes));
      return;
    }
    this.body.write(text);
  }
}

/**
 * What a handler of a route declaring a stream returns to answer with one: route serving opens the
 * response and hands it to `start`, which feeds it (and ends it). The handler may still throw before
 * it returns this, and the error is answered as any other.
 */
export class SseAnswer {
  constructor(
    readonly start: (stream: SseStream) => void,
    /** How often an idle stream gets a comment line. */
    readonly keepAliveMs = KEEP_ALIVE_MS,
  ) {}
}
