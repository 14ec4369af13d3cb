// Password hashing with scrypt from node:crypto: it runs on libuv's threadpool, so hashing never
// stalls the event loop. Hashes are PHC-style strings that carry their own cost parameters:
//   $scrypt$ln=15,r=8,p=3$<salt, base64>$<hash, base64>
// so the cost can be raised later without invalidating stored hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ScryptCost } from '../config.js';
import { Semaphore } from '../lib/semaphore.js';

const SALT_BYTES = 16;
const KEY_BYTES = 32;

// Each hash takes a core and 32 MiB for ~160 ms. Without a limit, a burst of sign-ins fills
// libuv's threadpool (4 threads on 2 cores): the event loop starves and memory grows by 32 MiB a
// thread. Hashes beyond the limit wait their turn instead (HASH_CONCURRENCY, default 1).
const hashSlots = new Semaphore(1);

/** How many password hashes may run at once in this process. */
export function setHashConcurrency(limit: number): void {
  hashSlots.setLimit(limit);
}

function scryptAsync(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.logN;
  // Node refuses work above `maxmem`; allow what this cost needs (128 * N * r) with headroom.
  const options: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r };
  return hashSlots.run(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
      }),
  );
}

/** Hashes `password` with a fresh random salt at `cost`. */
export async function hashPassword(password: string, cost: ScryptCost): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scryptAsync(password, salt, cost);
  return `$scrypt$ln=${cost.logN},r=${cost.r},p=${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const HASH_FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** The parts of a stored hash, or undefined when it is not one of ours. */
export function parseHash(stored: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | undefined {
  const match = HASH_FORMAT.exec(stored);
  if (!match) return undefined;
  const [, logN, r, p, salt, key] = match;
  return { cost: { logN: Number(logN), r: Number(r), p: Number(p) }, salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') };
}

/** True when `password` matches `stored`; compares in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const key = await scryptAsync(password, parsed.salt, parsed.cost);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
