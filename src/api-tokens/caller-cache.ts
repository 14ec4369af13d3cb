// Who a token secret belongs to, remembered so that an authenticated request can skip the token
// query (a SHA-256 digest and a JOIN: about a sixth of the work of a GET by id).
//
// Staying correct is the whole point of this module, so the database itself says when to forget:
// - Writes through this connection: temporary triggers (they exist on this connection only) empty
//   the cache whenever a token or user row is inserted (REPLACE included), deleted, or changed in a
//   field a remembered caller depends on (the token's digest, owner or expiry; any user field).
//   Deleting a user deletes its tokens through the schema's cascade, which fires the token trigger
//   too. Whatever code path writes, a revoked token fails on the very next request.
// - Writes by another process on the same file (the admin scripts, a second service) show up in
//   SQLite's `PRAGMA data_version`, which changes whenever another connection commits. It is read on
//   every lookup (a few µs, still a third of the query it replaces); when it has moved, the cache is
//   emptied. So a token revoked by `npm run user:reset-password` fails on the next request too.
// - Unknown secrets are never remembered (guessing cannot fill memory), and at most MAX_ENTRIES
//   callers are kept, the least recently used forgotten first.
import type { Db } from '../db.js';
import type { Caller } from '../http/context.js';

const MAX_ENTRIES = 10_000;

/** A caller as authentication needs it: the user, the token id, and the token's expiry and last use. */
export interface CachedCaller extends Caller {
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** Each cache on a connection gets its own SQL function and triggers. */
let instances = 0;

export class CallerCache {
  readonly #entries = new Map<string, CachedCaller>();
  readonly #dataVersion;
  #version: number;

  constructor(db: Db) {
    const forget = `forget_callers_${++instances}`;
    db.function(forget, { deterministic: false, varargs: false }, () => {
      this.#entries.clear();
      return null;
    });
    // `last_used_at` is left out on purpose: recording a use must not empty the cache.
    // An INSERT counts because REPLACE deletes the row it replaces without firing delete triggers.
    db.exec(`
      CREATE TEMP TRIGGER ${forget}_token_inserted AFTER INSERT ON main.api_tokens BEGIN SELECT ${forget}(); END;
      CREATE TEMP TRIGGER ${forget}_token_deleted AFTER DELETE ON main.api_tokens BEGIN SELECT ${forget}(); END;
      CREATE TEMP TRIGGER ${forget}_token_changed AFTER UPDATE OF token_digest, user_id, expires_at ON main.api_tokens
        BEGIN SELECT ${forget}(); END;
      CREATE TEMP TRIGGER ${forget}_user_inserted AFTER INSERT ON main.users BEGIN SELECT ${forget}(); END;
      CREATE TEMP TRIGGER ${forget}_user_deleted AFTER DELETE ON main.users BEGIN SELECT ${forget}(); END;
      CREATE TEMP TRIGGER ${forget}_user_changed AFTER UPDATE ON main.users BEGIN SELECT ${forget}(); END;
    `);
    this.#dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.#version = this.#dataVersion.get() as number;
  }

  /** The caller remembered for this secret, unless something may have changed since it was read. */
  get(secret: string): CachedCaller | undefined {
    this.#noticeOtherWriters();
    const caller = this.#entries.get(secret);
    if (caller !== undefined) {
      // Most recently used goes last: a user churning through new tokens cannot push out the others.
      this.#entries.delete(secret);
      this.#entries.set(secret, caller);
    }
    return caller;
  }

  /** Remembers a caller just read from the database. */
  remember(secret: string, caller: CachedCaller): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(secret, caller);
  }

  #noticeOtherWriters(): void {
    const version = this.#dataVersion.get() as number;
    if (version !== this.#version) {
      this.#version = version;
      this.#entries.clear();
    }
  }
}
