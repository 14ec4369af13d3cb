// Sends the outbox: every pending delivery that is due is POSTed to its webhook's URL through the
// SSRF-guarded fetch (no redirects followed, 10 s to answer), signed afresh for each attempt. A 2xx
// is delivered; anything else is tried again after the next delay of the schedule, and after the
// last one the delivery has failed. Everything it needs is in the database, so retries survive a
// restart: at start it sends whatever is due. At most `concurrency` attempts run at once, and at
// most `perUser` of one user's, so one user's dead endpoint (each attempt waiting its 10 s) never
// holds up another user's deliveries.
import { createGuardedFetch, createPooledFetch, type ConnectionPool, type FetchFunction } from '../ingest/fetch.js';
import { isIngestError } from '../ingest/errors.js';
import { describeError, type Logger } from '../lib/log.js';
import { signatureHeaders } from './signing.js';
import type { AttemptResult, WebhookStore } from './store.js';

/** After a failed attempt, the next waits this long: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h; then the delivery has failed. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];
/** A webhook whose attempts have all failed for this long is disabled (with a reason it shows). */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Of a receiver's answer only the status counts; its body is read (to keep the connection) up to this size. */
const ANSWER_MAX_BYTES = 64 * 1024;
const CONCURRENCY = 16;
const PER_USER = 4;
/** The longest the dispatcher sleeps without looking: deliveries other processes wrote are found by then. */
const MAX_SLEEP_MS = 30_000;
/** After the database failed to answer, look again after this long. */
const ERROR_RETRY_MS = 1_000;

export interface DispatcherOptions {
  store: WebhookStore;
  log: Logger;
  allowPrivateNetworks: boolean;
  /** The waits between attempts (default RETRY_DELAYS_MS); tests shorten them. */
  retryDelaysMs?: number[];
  /** Where connections to receivers are kept between deliveries (the service's pool); without it each delivery connects anew. */
  pool?: ConnectionPool;
  fetch?: FetchFunction;
}

export class WebhookDispatcher {
  private readonly store: WebhookStore;
  private readonly log: Logger;
  private readonly retryDelaysMs: number[];
  private readonly fetch: FetchFunction;
  /** Deliveries in the outbox whose change is not yet on disk: not sent until released. */
  private readonly held = new Set<string>();
  /** Attempts under way by delivery id, with how to stop them. */
  private readonly inFlight = new Map<string, { userId: string; controller: AbortController; done: Promise<void> }>();
  private readonly runningByUser = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private woken = false;
  private running = false;

  constructor(options: DispatcherOptions) {
    this.store = options.store;
    this.log = options.log;
    this.retryDelaysMs = options.retryDelaysMs ?? RETRY_DELAYS_MS;
    // No redirect is followed (maxRedirects 0, and `redirect: 'manual'` answers a 3xx as it is).
    const guard = { allowPrivateNetworks: options.allowPrivateNetworks, maxRedirects: 0, maxResponseBytes: ANSWER_MAX_BYTES };
    this.fetch = options.fetch ?? (options.pool ? createPooledFetch({ ...guard, pool: options.pool }) : createGuardedFetch(guard));
  }

  start(): void {
    this.running = true;
    this.wake();
  }

  /** Looks for due deliveries soon (once for all the wakes of one turn of the event loop). */
  wake(): void {
    if (!this.running || this.woken) return;
    this.woken = true;
    // After the current turn: a delivery written inside a transaction is committed by then.
    setImmediate(() => {
      this.woken = false;
      this.dispatch();
    });
  }

  /**
   * Keeps the deliveries `ids` from being sent until `release`: they report a change committed but
   * not yet on disk (a run's end waiting for its WAL sync), which a power cut could still take back.
   * Another wake meanwhile sends what else is due, not these.
   */
  hold(ids: readonly string[]): void {
    for (const id of ids) this.held.add(id);
  }

  /** The deliveries `ids` may be sent now (their change is on disk); looks for due ones soon. */
  release(ids: readonly string[]): void {
    for (const id of ids) this.held.delete(id);
    this.wake();
  }

  /** Stops sending; attempts under way are abandoned and their deliveries stay pending, sent after the next start. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    const attempts = [...this.inFlight.values()];
    for (const attempt of attempts) attempt.controller.abort();
    await Promise.all(attempts.map((attempt) => attempt.done));
  }

  private dispatch(): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    const now = Date.now();
    let next = now + MAX_SLEEP_MS;
    try {
      for (const { userId, nextMs } of this.store.pendingUsers()) {
        if (nextMs > now) {
          next = Math.min(next, nextMs);
          continue;
        }
        const running = this.runningByUser.get(userId) ?? 0;
        let free = Math.min(PER_USER - running, CONCURRENCY - this.inFlight.size);
        if (free <= 0) continue; // an attempt that ends wakes the dispatcher again
        for (const id of this.store.dueDeliveries(userId, now, free + running + this.held.size)) {
          if (free === 0) break;
          if (this.inFlight.has(id) || this.held.has(id)) continue;
          this.send(id, userId);
          free -= 1;
        }
      }
    } catch (error) {
      this.log.error({ msg: 'reading the webhook outbox failed; retrying', error: describeError(error) });
      next = now + ERROR_RETRY_MS;
    }
    this.timer = setTimeout(() => this.dispatch(), Math.max(0, next - Date.now()));
    this.timer.unref();
  }

  private send(id: string, userId: string): void {
    const controller = new AbortController();
    this.runningByUser.set(userId, (this.runningByUser.get(userId) ?? 0) + 1);
    const done = this.attempt(id, controller.signal)
      .catch((error) =>
        this.log.error({ msg: 'a webhook delivery attempt failed unexpectedly', deliveryId: id, error: describeError(error) }),
      )
      .finally(() => {
        this.inFlight.delete(id);
        const left = (this.runningByUser.get(userId) ?? 1) - 1;
        if (left === 0) this.runningByUser.delete(userId);
        else this.runningByUser.set(userId, left);
        this.wake();
      });
    this.inFlight.set(id, { userId, controller, done });
  }

  private async attempt(id: string, stop: AbortSignal): Promise<void> {
    const startedMs = Date.now();
    const target = this.store.target(id, startedMs);
    if (!target) return; // delivered, deleted or disabled meanwhile
    const headers = {
      'content-type': 'application/json',
      ...signatureHeaders(target.secrets, target.id, Math.floor(startedMs / 1000), target.payload),
    };
    const timeout = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    let result: AttemptResult;
    try {
      const response = await this.fetch(target.url, {
        method: 'POST',
        headers,
        body: target.payload,
        redirect: 'manual',
        signal: AbortSignal.any([stop, timeout]),
      });
      // Read to its end, the connection can carry the next delivery; a larger answer ends the connection.
      await response.arrayBuffer().catch(() => {});
      const status = response.status;
      result =
        status >= 200 && status < 300
          ? { delivered: true, statusCode: status }
          : {
              delivered: false,
              statusCode: status,
              error:
                status >= 300 && status < 400
                  ? `the receiver answered ${status}, a redirect, which is not followed`
                  : `the receiver answered ${status}`,
              nextAttemptMs: null,
            };
    } catch (error) {
      if (stop.aborted) return; // stopping: it stays pending
      const reason = timeout.aborted
        ? `the receiver did not answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`
        : isIngestError(error)
          ? error.message
          : 'the request to the receiver failed';
      result = { delivered: false, statusCode: null, error: reason, nextAttemptMs: null };
    }
    if (!result.delivered) {
      const delay = this.retryDelaysMs[target.attempts];
      result.nextAttemptMs = delay === undefined ? null : Date.now() + delay;
    }
    const { disabled } = this.store.recordAttempt(id, result, Date.now(), DISABLE_AFTER_MS);
    if (disabled) this.log.info({ msg: 'a webhook was disabled: every delivery failed for 5 days', userId: target.userId });
  }
}
