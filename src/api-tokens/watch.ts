// Ends the event streams whose API token stops working. A request's token is checked once, when
// the request comes (authenticate.ts); a stream outlives that check, by hours when its run waits
// for approval. So the token of every open stream is read again (one read by its id): every
// RECHECK_MS, which sees a token that expired, and what another process changed (an operator's
// script revoking a token, or deleting or disabling an account); and at once when a request that
// may have changed the tokens of a user with open streams ends — the API changes a user's tokens
// and account only through the user's own requests (DELETE /api-tokens/{id}, a password change,
// DELETE /auth/me).
import type { Caller } from '../http/context.js';
import type { ApiTokenStore } from './store.js';

/** How often the tokens of open streams are read again. */
const RECHECK_MS = 5_000;

/** One open stream: its token, and what ends it. */
interface Held {
  tokenId: string;
  lost: (message: string) => void;
}

/** The watch of the tokens of open streams: `hold` one while its stream is open (see CredentialWatch). */
export function createTokenWatch(tokens: ApiTokenStore) {
  /** The open streams, by user. */
  const byUser = new Map<string, Set<Held>>();
  let timer: NodeJS.Timeout | undefined;

  /** Why the token no longer works (as authentication words it), or undefined while it does. */
  function whyRefused(tokenId: string, nowMs: number): string | undefined {
    const standing = tokens.standingOf(tokenId);
    if (!standing) return 'The API token was revoked (or its account deleted).';
    if (standing.disabled) return "The API token's account is disabled by the service's operator.";
    if (standing.expiresAt !== null && Date.parse(standing.expiresAt) <= nowMs) return 'The API token has expired.';
    return undefined;
  }

  /** Ends those of `streams` whose token no longer works, reading each token once. */
  function recheck(streams: Held[]): void {
    const nowMs = Date.now();
    const verdicts = new Map<string, string | undefined>();
    for (const held of streams) {
      if (!verdicts.has(held.tokenId)) {
        try {
          verdicts.set(held.tokenId, whyRefused(held.tokenId, nowMs));
        } catch {
          return; // a read that failed (the database closing at shutdown) ends nothing: the next check reads again
        }
      }
      const why = verdicts.get(held.tokenId);
      if (why !== undefined) held.lost(why);
    }
  }

  const recheckAll = () => recheck([...byUser.values()].flatMap((streams) => [...streams]));

  return {
    hold(caller: Caller, lost: (message: string) => void): () => void {
      const held: Held = { tokenId: caller.tokenId, lost };
      let streams = byUser.get(caller.id);
      if (!streams) byUser.set(caller.id, (streams = new Set()));
      streams.add(held);
      if (timer === undefined) {
        timer = setInterval(recheckAll, RECHECK_MS);
        timer.unref();
      }
      const userStreams = streams;
      return () => {
        userStreams.delete(held);
        if (userStreams.size === 0 && byUser.get(caller.id) === userStreams) byUser.delete(caller.id);
        if (byUser.size === 0) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },

    /** True while `userId` has a stream open. */
    watches: (userId: string) => byUser.has(userId),

    /** Reads the tokens of `userId`'s open streams now, ending those that no longer work. */
    recheckUser(userId: string): void {
      const streams = byUser.get(userId);
      if (streams) recheck([...streams]);
    },
  };
}
