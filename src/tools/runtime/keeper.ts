// What a tool opened for one run and the next run may use again: an MCP server's connected client.
// A run takes a kept thing by key (or keeps the one it opened), and gives it back when it ends;
// several runs may hold one at once. A thing is closed once no run holds it and it has been idle
// `idleMs`, or is `maxAgeMs` old, or is pushed out by newer ones past `max`, or when a run found it
// broken (`discard`), or when the keeper closes (the service stops).

export interface KeeperOptions {
  /** How long a thing no run holds is kept (ms). */
  idleMs: number;
  /** How long after it was opened a thing is handed out at most (ms). */
  maxAgeMs: number;
  /** Things kept at most (the least recently taken one is closed first). */
  max: number;
}

/**
 * The service's keeper: a thing idle 4 s is closed (the kept-alive connections of its requests are
 * kept as long), and none is handed out a minute after it was opened (an MCP server's host is then
 * vetted again, and what it said of itself asked again); at most 64.
 */
export const KEPT_FOR_RUNS: KeeperOptions = { idleMs: 4_000, maxAgeMs: 60_000, max: 64 };

/** One run's hold on a kept thing. */
export interface Held<T> {
  value: T;
  /** Gives it back, for the next run (or closes it, when it may not be kept). Once. */
  release(): void;
  /** It answered as it should not: no run takes it again, and it is closed once no run holds it. */
  discard(): void;
}

export interface Keeper {
  /** The thing kept under `key`, held by the caller until it releases it; undefined when none is kept (or it is too old). */
  take<T>(key: string): Held<T> | undefined;
  /** Keeps `value` under `key` (closed by `close` in the end; one kept there before is discarded), held by the caller. */
  keep<T>(key: string, value: T, close: () => Promise<void>): Held<T>;
  /** Closes everything kept: nothing is kept after it. */
  close(): void;
}

interface Entry {
  value: unknown;
  close: () => Promise<void>;
  openedAt: number;
  holders: number;
  discarded: boolean;
  idle?: NodeJS.Timeout;
}

export function createKeeper(options: KeeperOptions): Keeper {
  const kept = new Map<string, Entry>();
  let closed = false;
  const shut = (entry: Entry) => void entry.close().catch(() => {});
  const discard = (key: string, entry: Entry) => {
    if (kept.get(key) === entry) kept.delete(key);
    if (entry.discarded) return;
    entry.discarded = true;
    clearTimeout(entry.idle);
    if (entry.holders === 0) shut(entry);
  };
  const hold = <T>(key: string, entry: Entry): Held<T> => {
    entry.holders += 1;
    clearTimeout(entry.idle);
    let released = false;
    return {
      value: entry.value as T,
      discard: () => discard(key, entry),
      release() {
        if (released) return;
        released = true;
        entry.holders -= 1;
        if (entry.holders > 0) return;
        if (entry.discarded) shut(entry);
        else if (Date.now() - entry.openedAt >= options.maxAgeMs) discard(key, entry);
        else (entry.idle = setTimeout(() => discard(key, entry), options.idleMs)).unref();
      },
    };
  };
  return {
    take<T>(key: string) {
      const entry = kept.get(key);
      if (!entry) return undefined;
      if (Date.now() - entry.openedAt >= options.maxAgeMs) {
        discard(key, entry);
        return undefined;
      }
      // The most recently taken last: a Map keeps the order things were set in.
      kept.delete(key);
      kept.set(key, entry);
      return hold<T>(key, entry);
    },
    keep<T>(key: string, value: T, close: () => Promise<void>) {
      const entry: Entry = { value, close, openedAt: Date.now(), holders: 0, discarded: closed };
      if (!closed) {
        const before = kept.get(key);
        if (before) discard(key, before);
        kept.set(key, entry);
        if (kept.size > options.max) {
          const [oldestKey, oldest] = kept.entries().next().value!;
          discard(oldestKey, oldest);
        }
      }
      return hold<T>(key, entry);
    },
    close() {
      closed = true;
      for (const [key, entry] of [...kept]) discard(key, entry);
    },
  };
}
