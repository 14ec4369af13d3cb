// What sign-up, sign-in and the caller's own account do, between the route (validated input in,
// response out) and the stores. Every step that awaits a password hash lives here, with what it
// checks again afterwards: other requests run while a hash is computed.
import type { Config } from '../config.js';
import type { Caller } from '../http/context.js';
import { conflict, forbidden, unauthorized } from '../http/errors.js';
import type { RateLimits } from '../http/rate-limit.js';
import type { ApiTokenRow, ApiTokenStore } from '../api-tokens/store.js';
import { formatTimestamp } from '../lib/ids.js';
import type { UserRow, UserStore } from '../users/store.js';
import type { PasswordHasher } from './password.js';
import { defaultUserName } from './schema.js';

const WRONG_CREDENTIALS = 'The email or password is wrong.';
const EMAIL_TAKEN = 'An account with this email already exists.';

export type Accounts = ReturnType<typeof createAccounts>;

export interface AccountDeps {
  users: UserStore;
  apiTokens: ApiTokenStore;
  passwords: PasswordHasher;
  rateLimits: RateLimits;
  config: Pick<Config, 'scrypt' | 'signInTokenTtlMs' | 'signUp'>;
}

export function createAccounts({ users, apiTokens, passwords, rateLimits, config }: AccountDeps) {
  // Sign-ups being hashed, by email (normalised by the schema).
  const signUpsUnderWay = new Map<string, Promise<UserRow>>();
  // Verified against when the email is unknown, so both failures of sign-in take the same time.
  let decoyHash: Promise<string> | undefined;
  // A decoy refused by a full hash queue is made again next time, not remembered as a failure.
  const decoy = (address: string) =>
    (decoyHash ??= passwords.hash('decoy password, never matches', config.scrypt, { key: address }).catch((error: unknown) => {
      decoyHash = undefined;
      throw error;
    }));

  /** Checks the caller's password; attempts count against the account's failed-sign-in allowance. */
  async function checkOwnPassword(caller: Caller, address: string, password: string, wrong: string): Promise<UserRow> {
    const attempt = rateLimits.beginPasswordCheck(caller.email, address);
    try {
      const stored = users.get(caller.id);
      if (!stored) throw unauthorized('The account no longer exists.');
      if (!(await passwords.verify(password, stored.passwordHash, { key: address, behind: rateLimits.failedLately(address) }))) {
        attempt.failed();
        throw forbidden(wrong);
      }
      attempt.succeeded();
      return stored;
    } finally {
      attempt.cancelled(); // a no-op once settled: gives the place back when no check was made (503)
    }
  }

  return {
    /**
     * Creates an account; 409 when the email is taken. A taken email is found before the hash where
     * it can be (sign-up's 409 tells anyone that an email has an account, so its timing tells
     * nothing more): a sign-up of an email another one is hashing for waits for that one's outcome
     * instead of hashing too.
     */
    async signUp(input: { name?: string; email: string; password: string }, address: string): Promise<UserRow> {
      if (!config.signUp) throw forbidden('Sign-up is closed on this service: its operator creates accounts.');
      for (let pending = signUpsUnderWay.get(input.email); pending; pending = signUpsUnderWay.get(input.email)) {
        await pending.catch(() => {}); // a refused or failed one leaves the email to the next
      }
      if (users.getByEmail(input.email)) throw conflict(EMAIL_TAKEN);
      const signUp = (async () => {
        const passwordHash = await passwords.hash(input.password, config.scrypt, { key: address });
        // Checked again after the (awaited) hash, right before the insert: nothing runs in between.
        if (users.getByEmail(input.email)) throw conflict(EMAIL_TAKEN);
        return users.create({ email: input.email, name: input.name ?? defaultUserName(input.email), passwordHash });
      })();
      signUpsUnderWay.set(input.email, signUp);
      try {
        return await signUp;
      } finally {
        signUpsUnderWay.delete(input.email);
      }
    },

    /** Checks the password and issues a sign-in token; 401 for a wrong password or unknown email. */
    async signIn(input: { email: string; password: string }, address: string): Promise<{ user: UserRow; token: ApiTokenRow }> {
      const attempt = rateLimits.beginSignIn(input.email, address);
      try {
        const user = users.getByEmail(input.email);
        const stored = user?.passwordHash ?? (await decoy(address));
        // An address that guessed wrong lately waits behind everyone else.
        const matches = await passwords.verify(input.password, stored, { key: address, behind: rateLimits.failedLately(address) });
        // A disabled account answers like a wrong password (createForSignIn refuses it below), so a
        // guesser cannot learn that a password was right.
        const expiresAt = formatTimestamp(Date.now() + config.signInTokenTtlMs);
        // Written only if the hash just verified is still the user's (and the account is not disabled):
        // a password changed, or an account deleted, while it was computed makes this a wrong password
        // or an unknown email.
        const token = user && matches ? apiTokens.createForSignIn(user, { description: 'Created by sign-in', expiresAt }) : undefined;
        if (!user || !token) {
          attempt.failed();
          throw unauthorized(WRONG_CREDENTIALS);
        }
        attempt.succeeded();
        return { user, token };
      } finally {
        attempt.cancelled(); // a no-op once settled: gives the place back when no check was made (503)
      }
    },

    /** Changes the caller's name and/or password (a new password needs the current one). */
    async updateMe(
      caller: Caller,
      address: string,
      input: { name?: string; password?: string; currentPassword?: string },
    ): Promise<UserRow> {
      let password: { hash: string; checked: string } | undefined;
      if (input.password !== undefined) {
        const stored = await checkOwnPassword(caller, address, input.currentPassword!, 'The current password is wrong.');
        password = { hash: await passwords.hash(input.password, config.scrypt, { key: address }), checked: stored.passwordHash };
      }
      // Only what this request changes is written: a rename made while the hashes ran stays.
      const user = users.updateOwnAccount(caller.id, caller.tokenId, { name: input.name, password });
      if (user === 'token_gone') throw unauthorized('The API token was revoked while the request ran.');
      // Another request changed the password after this one checked it: the one given is no longer current.
      if (user === 'password_changed') throw forbidden('The current password is wrong: the password was changed while the request ran.');
      return user;
    },

    /** Deletes the caller's account and everything it owns, given the password. */
    async deleteMe(caller: Caller, address: string, input: { password: string }): Promise<void> {
      await checkOwnPassword(caller, address, input.password, 'The password is wrong.');
      if (!users.deleteOwnAccount(caller.id, caller.tokenId)) throw unauthorized('The API token was revoked while the request ran.');
    },
  };
}
