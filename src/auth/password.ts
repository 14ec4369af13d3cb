// Password hashing with scrypt from node:crypto: it runs on libuv's threadpool, so hashing never
// stalls the event loop. Hashes are PHC-style strings that carry their own cost parameters:
//   $scrypt$ln=15,r=8,p=3$<salt, base64>$<hash, base64>
// so the cost can be raised later without invalidating stored hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ScryptCost } from '../config.js';
import { Semaphore, type Line } from '../lib/semaphore.js';
import { unavailable } from '../http/errors.js';

const SALT_BYTES = 16;
const KEY_BYTES = 32;

export interface PasswordHasherOptions {
  /** Hashes computed at once (HASH_CONCURRENCY); the rest wait their turn, served fairly by client address. */
  concurrency: number;
  /**
   * Hashes that may wait for a slot (HASH_QUEUE_MAX), in each of the two lines (see `Line.behind`);
   * beyond them a request is refused at once with 503 and Retry-After. Unbounded when left out (the
   * admin scripts).
   */
  queueMax?: number;
  /**
   * How long other addresses' hashes may make a hash wait, its own included, at the pace hashes have
   * taken lately: one that would take longer is refused at once with 503 and Retry-After, however
   * short the line. Waiting is served round-robin by address, so this is what a single sign-in from
   * a new address waits for: a flood from many addresses slows every hash (they share the cores with
   * it), and this keeps a real sign-in's answer, a 200 or a 503, near `maxWaitMs`. Unbounded when
   * left out.
   */
  maxWaitMs?: number;
  /**
   * The longest a hash may expect to wait in all, its own address's earlier hashes included: a burst
   * from one address (sign-ups of a test suite) waits its turn up to this. Unbounded when left out.
   */
  maxQueueWaitMs?: number;
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
  /** A running average of how long one hash takes, for the bounds and Retry-After. */
  private averageMs = 200;

  constructor(private readonly options: PasswordHasherOptions) {
    this.slots = new Semaphore(options.concurrency);
  }

  /** Hashes `password` with a fresh random salt at `cost`; it waits in `line` (key: the client address). */
  async hash(password: string, cost: ScryptCost, line: Line = {}): Promise<string> {
    const salt = randomBytes(SALT_BYTES);
    const key = await this.scrypt(password, salt, cost, line);
    return `$scrypt$ln=${cost.logN},r=${cost.r},p=${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
  }

  /**
   * True when `password` matches `stored`; compares in constant time. With `line.behind` (a client
   * address that has failed a password check lately), it waits in a second line, served only when
   * nobody else waits: a flood of wrong guesses cannot keep a real sign-in out.
   */
  async verify(password: string, stored: string, line: Line = {}): Promise<boolean> {
    const parsed = parseHash(stored);
    if (!parsed) return false;
    const key = await this.scrypt(password, parsed.salt, parsed.cost, line);
    return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
  }

  private scrypt(password: string, salt: Buffer, cost: ScryptCost, line: Line): Promise<Buffer> {
    const { queueMax, maxWaitMs, maxQueueWaitMs, concurrency } = this.options;
    if (!this.slots.hasFreeSlot) {
      const { own, others, otherTurns } = this.slots.ahead(line);
      // When it would be done, at the pace measured lately (a running hash counted as one ahead).
      const doneInMs = (ahead: number) => ((ahead + 1) / concurrency) * this.averageMs + this.averageMs;
      const waitMs = doneInMs(own + others);
      const lineFull = queueMax !== undefined && this.slots.waitingCount(line.behind) >= queueMax;
      // Only other addresses' turns count against maxWaitMs: with nobody else waiting, a burst from
      // one address holds up no one, and waits for its own hashes up to maxQueueWaitMs.
      const othersTooLong = maxWaitMs !== undefined && otherTurns > 0 && doneInMs(otherTurns) > maxWaitMs;
      if (lineFull || othersTooLong || (maxQueueWaitMs !== undefined && waitMs > maxQueueWaitMs)) {
        return Promise.reject(
          unavailable('Too many password checks are waiting; try again shortly.', Math.max(1, Math.ceil(waitMs / 1000))),
        );
      }
      this.options.onWait?.(password);
    }
    return this.slots.run(async () => {
      await this.options.beforeHash?.(password);
      const started = performance.now();
      const key = await scryptAsync(password, salt, cost);
      this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started);
      return key;
    }, line);
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
