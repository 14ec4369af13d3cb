// API token secrets: 256 random bits as URL-safe text behind a recognisable prefix, and the
// SHA-256 digest that is the only thing a request is looked up by.
import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'ams_';

/** A new token secret: `ams_` and 43 base64url characters (32 bytes from the CSPRNG). */
export function newTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** The SHA-256 digest of a token secret, as stored in `api_tokens.token_digest`. */
export function digestToken(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}
