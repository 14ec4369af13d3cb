// Password hashing with scrypt from node:crypto: it runs on libuv's threadpool, so hashing never
// stalls the event loop. Hashes are PHC-style strings that carry their own cost parameters:
//   $scrypt$ln=15,r=8,p=3$<salt, base64>$<hash, base64>
// so the cost can be raised later without invalidating stored hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ScryptCost } from '../config.js';
import { Semaphore } from '../lib/semaphore.js';
import { unavailable } from '../http/errors.js';

const SALT_BYTES = 16;
const KEY_BYTES = 32;

export interface PasswordHasherOptions {
  /** Hashes computed at once (HASH_CONCURRENCY); the rest wait their turn. */
  concurrency: number;
  /**
   * Hashes that may wait for a slot (HASH_QUEUE_MAX), in each of the two lines (see `behind`);
   * beyond them a request is refused at once with 503 and Retry-After, so a flood of sign-ins cannot
   * make a real one wait for minutes. Unbounded when left out (the admin scripts).
   */
  queueMax?: number;
  /**
   * The longest a hash may expect to take, its wait for a slot included, at the pace hashes have
   * taken lately: one that would take longer is refused at once with 503 and Retry-After, however
   * short the line. A flood slows every hash (they share the cores with it), so a full line of 20
   * could mean 10 s; this keeps a real sign-in's answer, a 200 or a 503, near `maxWaitMs`.
   * Unbounded when left out.
   */
  maxWaitMs?: number;
  /**
   * Awaited once a hash holds its slot, right before scrypt runs. Tests use it to hold a hash mid-way
   * and drive a race deterministically; the service never sets it.
   */
  beforeHash?: (password: string) => Promise<void>;
  /** Called when a hash joins a line to wait for a slot. Tests use it to know a request waits; the service never sets it. */
  onWait?: (password: string) => void;
}

/**
 * Computes scrypt a bounded number at a time. Each hash takes a core and 32 MiB for ~350 ms (on a
 * 2-core VM); without a limit, a burst of sign-ins fills libuv's threadpool (4 threads on 2 cores):
 * the event loop starves and memory grows by 32 MiB a thread. The service makes one per app.
 */
export class PasswordHasher {
  private readonly slots: Semaphore;
  /** A running average of how long one hash takes, for Retry-After. */
  private averageMs = 200;

  constructor(private readonly options: PasswordHasherOptions) {
    this.slots = new Semaphore(options.concurrency);
  }

  /** Hashes `password` with a fresh random salt at `cost`. */
  async hash(password: string, cost: ScryptCost): Promise<string> {
    const salt = randomBytes(SALT_BYTES);
    const key = await this.scrypt(password, salt, cost);
    return `$scrypt$ln=${cost.logN},r=${cost.r},p=${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
  }

  /**
   * True when `password` matches `stored`; compares in constant time. With `behind` (a client
   * address that has failed a password check lately), it waits in a second line, served only when
   * nobody else waits: a flood of wrong guesses cannot keep a real sign-in out.
   */
  async verify(password: string, stored: string, behind = false): Promise<boolean> {
    const parsed = parseHash(stored);
    if (!parsed) return false;
    const key = await this.scrypt(password, parsed.salt, parsed.cost, behind);
    return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
  }

  private scrypt(password: string, salt: Buffer, cost: ScryptCost, behind = false): Promise<Buffer> {
    const { queueMax, maxWaitMs, concurrency } = this.options;
    if (!this.slots.hasFreeSlot) {
      // When the hashes ahead would be done, at the pace measured lately.
      const ahead = this.slots.waitingCount() + (behind ? this.slots.waitingCount(true) : 0);
      const waitMs = ((ahead + 1) / concurrency) * this.averageMs;
      const lineFull = queueMax !== undefined && this.slots.waitingCount(behind) >= queueMax;
      if (lineFull || (maxWaitMs !== undefined && waitMs + this.averageMs > maxWaitMs)) {
        return Promise.reject(unavailable('Too many password checks are waiting; try again shortly.', Math.max(1, Math.ceil(waitMs / 1000))));
      }
      this.options.onWait?.(password);
    }
    return this.slots.run(async () => {
      await this.options.beforeHash?.(password);
      const started = performance.now();
      const key = await scryptAsync(password, salt, cost);
      this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started);
      return key;
    }, behind);
  }
}

function scryptAsync(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.logN;
  // Node refuses work above `maxmem`; allow what this cost needs (128 * N * r) with headroom.
  const options: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r };
  return new Promise<Buffer>((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** For the admin scripts and tests: one hash at a time. */
const oneAtATime = new PasswordHasher({ concurrency: 1 });

/** Hashes `password` with a fresh random salt at `cost` (outside the service: admin scripts). */
export const hashPassword = (password: string, cost: ScryptCost): Promise<string> => oneAtATime.hash(password, cost);

const HASH_FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** The parts of a stored hash, or undefined when it is not one of ours. */
export function parseHash(stored: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | undefined {
  const match = HASH_FORMAT.exec(stored);
  if (!match) return undefined;
  const [, logN, r, p, salt, key] = match;
  return { cost: { logN: Number(logN), r: Number(r), p: Number(p) }, salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') };
}

/** True when `password` matches `stored` (outside the service: admin scripts and tests). */
export const verifyPassword = (password: string, stored: string): Promise<boolean> => oneAtATime.verify(password, stored);
