// SQL for webhooks and their outbox of deliveries. The signing secrets are stored sealed
// (AES-256-GCM) and opened only to sign a delivery. A delivery row is written by `enqueue` inside
// the transaction of the change it reports (see events.ts); the dispatcher reads the due ones and
// records each attempt.
import { unsyncedTransaction, type Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { boolean, columnMap, json } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { newWebhookSecret } from './signing.js';
import type { DeliveryStatus, WebhookChange, WebhookInput } from './schema.js';

/** How long the secret before a rotation keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;

export interface WebhookRow {
  id: string;
  userId: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  /** Ms since the epoch; null when no earlier secret signs. */
  previousSecretUntil: number | null;
  createdAt: string;
  updatedAt: string;
  /** The plain secret: only on the row `create` returns, never read back. */
  secret?: string;
}

const WEBHOOK_ROW = columnMap<Omit<WebhookRow, 'secret'>>({
  id: 'id',
  userId: 'user_id',
  url: 'url',
  events: json('events'),
  description: 'description',
  enabled: boolean('enabled'),
  disabledReason: 'disabled_reason',
  previousSecretUntil: 'previous_secret_until',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
});
const WEBHOOK_COLUMNS = WEBHOOK_ROW.select('webhooks');

export interface DeliveryRow {
  id: string;
  webhookId: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptMs: number | null;
  createdAt: string;
  deliveredAt: string | null;
}

const DELIVERY_ROW = columnMap<DeliveryRow>({
  id: 'id',
  webhookId: 'webhook_id',
  event: 'event',
  status: 'status',
  attempts: 'attempts',
  lastStatusCode: 'last_status_code',
  lastError: 'last_error',
  nextAttemptMs: 'next_attempt_ms',
  createdAt: 'created_at',
  deliveredAt: 'delivered_at',
});
const DELIVERY_COLUMNS = DELIVERY_ROW.select('webhook_deliveries');

/** What one attempt needs: where to, the secrets that sign (opened), the body as stored. */
export interface DeliveryTarget {
  id: string;
  userId: string;
  url: string;
  secrets: string[];
  payload: string;
  attempts: number;
}

/** How an attempt went, as recorded. */
export type AttemptResult =
  | { delivered: true; statusCode: number }
  | {
      delivered: false;
      statusCode: number | null;
      error: string;
      /** When to try again (ms since the epoch); null: no more attempts, the delivery has failed. */
      nextAttemptMs: number | null;
    };

export type WebhookStore = ReturnType<typeof createWebhookStore>;

export function createWebhookStore(db: Db, sealer: Sealer) {
  const table = ownedTable<WebhookRow>(db, 'webhooks', WEBHOOK_ROW);
  const insert = db.prepare(
    `INSERT INTO webhooks (id, user_id, url, events, description, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     RETURNING ${WEBHOOK_COLUMNS}`,
  );
  // Enabling again forgets why it was disabled and how long it had failed: the owner fixed something.
  const update = db.prepare(
    `UPDATE webhooks
        SET url = coalesce(@url, url), events = coalesce(@events, events), description = coalesce(@description, description),
            enabled = coalesce(@enabled, enabled),
            disabled_reason = iif(@enabled IS NULL, disabled_reason, NULL),
            failing_since = iif(@enabled = 1, NULL, failing_since),
            updated_at = @now
      WHERE id = @id AND user_id = @userId RETURNING ${WEBHOOK_COLUMNS}`,
  );
  const rotate = db.prepare(
    `UPDATE webhooks SET previous_secret = secret, previous_secret_until = ?, secret = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
  );
  const selectSubscribers = db
    .prepare(
      `SELECT id FROM webhooks
        WHERE user_id = ? AND enabled = 1 AND EXISTS (SELECT 1 FROM json_each(webhooks.events) WHERE value IN ('*', ?))`,
    )
    .pluck();
  const insertDelivery = db.prepare(
    `INSERT INTO webhook_deliveries (id, webhook_id, user_id, event, payload, status, next_attempt_ms, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING ${DELIVERY_COLUMNS}`,
  );
  const selectDeliverySeq = db.prepare(`SELECT seq FROM webhook_deliveries WHERE id = ? AND webhook_id = ? AND user_id = ?`).pluck();
  // Newest first: the cursor is the last (oldest) delivery seen.
  const selectDeliveries = db.prepare(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? AND user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
  );
  // The users with pending deliveries of enabled webhooks, each with the time its next one is due.
  const selectPendingUsers = db.prepare(
    `SELECT d.user_id AS userId, min(d.next_attempt_ms) AS nextMs FROM webhook_deliveries d
       JOIN webhooks w ON w.id = d.webhook_id AND w.enabled = 1
      WHERE d.status = 'pending' GROUP BY d.user_id`,
  );
  const selectDueOfUser = db
    .prepare(
      `SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.enabled = 1
        WHERE d.user_id = ? AND d.status = 'pending' AND d.next_attempt_ms <= ? ORDER BY d.next_attempt_ms, d.seq LIMIT ?`,
    )
    .pluck();
  const selectTarget = db.prepare(
    `SELECT d.id, d.user_id AS userId, w.url, w.secret, w.previous_secret AS previousSecret, w.previous_secret_until AS previousUntil,
            d.payload, d.attempts
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.id = ? AND d.status = 'pending' AND w.enabled = 1`,
  );
  const markDelivered = db
    .prepare(
      `UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1, last_status_code = ?, last_error = NULL,
            next_attempt_ms = NULL, delivered_at = ?
      WHERE id = ? AND status = 'pending' RETURNING webhook_id`,
    )
    .pluck();
  const markAttemptFailed = db
    .prepare(
      `UPDATE webhook_deliveries SET status = iif(@nextMs IS NULL, 'failed', 'pending'), attempts = attempts + 1,
            last_status_code = @statusCode, last_error = @error, next_attempt_ms = @nextMs
      WHERE id = @id AND status = 'pending' RETURNING webhook_id`,
    )
    .pluck();
  const clearFailing = db.prepare(`UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL`);
  const noteFailing = db
    .prepare(`UPDATE webhooks SET failing_since = coalesce(failing_since, ?) WHERE id = ? RETURNING failing_since`)
    .pluck();
  const disable = db.prepare(`UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ? AND enabled = 1`);

  // An attempt is recorded without an fsync inside the commit (the dispatcher shares the event loop
  // with every request, and each delivery would hold it for the disk): a power cut right after may
  // lose the record, and the delivery is then sent again, which at-least-once delivery allows (the
  // receiver drops a repeated `webhook-id`).
  const recordAttemptInTransaction = unsyncedTransaction(
    db,
    (id: string, result: AttemptResult, nowMs: number, disableAfterMs: number): { disabled: boolean } => {
      if (result.delivered) {
        const webhookId = markDelivered.get(result.statusCode, timestamp(), id) as string | undefined;
        if (webhookId !== undefined) clearFailing.run(webhookId);
        return { disabled: false };
      }
      const webhookId = markAttemptFailed.get({ id, statusCode: result.statusCode, error: result.error, nextMs: result.nextAttemptMs }) as
        string | undefined;
      if (webhookId === undefined) return { disabled: false };
      const failingSince = noteFailing.get(nowMs, webhookId) as number;
      if (nowMs - failingSince < disableAfterMs) return { disabled: false };
      const days = Math.round(disableAfterMs / 86_400_000);
      const reason = `Disabled by the service: every delivery failed for ${days} days (the last: ${result.error}). Enable it again once the receiver answers.`;
      return { disabled: disable.run(reason, timestamp(), webhookId).changes > 0 };
    },
  );

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,
    /** Deletes the webhook and (schema cascade) its deliveries, pending ones included. */
    delete: table.delete,

    /** Creates the webhook with a new secret, returned this once (it is stored sealed). */
    create(userId: string, input: WebhookInput): WebhookRow & { secret: string } {
      const secret = newWebhookSecret();
      const now = timestamp();
      const row = insert.get(
        newId(),
        userId,
        input.url,
        JSON.stringify(input.events),
        input.description,
        sealer.seal(secret),
        now,
        now,
      ) as Record<string, unknown>;
      return Object.assign(WEBHOOK_ROW.fromRow(row), { secret });
    },

    /** Changes what `change` names; undefined when the user has no such webhook. */
    update(userId: string, id: string, change: WebhookChange): WebhookRow | undefined {
      const raw = update.get({
        url: change.url ?? null,
        events: change.events === undefined ? null : JSON.stringify(change.events),
        description: change.description ?? null,
        enabled: change.enabled === undefined ? null : change.enabled ? 1 : 0,
        now: timestamp(),
        id,
        userId,
      }) as Record<string, unknown> | undefined;
      return raw === undefined ? undefined : WEBHOOK_ROW.fromRow(raw);
    },

    /** A new secret for the webhook; the current one keeps signing beside it for PREVIOUS_SECRET_MS. Undefined: no such webhook. */
    rotateSecret(userId: string, id: string): { secret: string; previousSecretUntil: number } | undefined {
      const secret = newWebhookSecret();
      const previousSecretUntil = Date.now() + PREVIOUS_SECRET_MS;
      const changed = rotate.run(previousSecretUntil, sealer.seal(secret), timestamp(), id, userId).changes > 0;
      return changed ? { secret, previousSecretUntil } : undefined;
    },

    /** The user's enabled webhooks that subscribe to `event`. */
    subscribersOf(userId: string, event: string): string[] {
      return selectSubscribers.all(userId, event) as string[];
    },

    /** Puts one delivery of `payload` per webhook in the outbox, due now. Call it inside the transaction of the change it reports. */
    enqueue(userId: string, webhookIds: string[], event: string, payload: string): DeliveryRow[] {
      const now = timestamp();
      const due = Date.now();
      return webhookIds.map((webhookId) =>
        DELIVERY_ROW.fromRow(insertDelivery.get(newId(), webhookId, userId, event, payload, due, now) as Record<string, unknown>),
      );
    },

    seqOfDelivery: (userId: string, webhookId: string, id: string) => selectDeliverySeq.get(id, webhookId, userId) as number | undefined,

    /** A page of a webhook's deliveries, newest first (`afterSeq` 0: from the newest). */
    listDeliveries(userId: string, webhookId: string, page: PageRequest): Page<DeliveryRow> {
      const raws = selectDeliveries.all(webhookId, userId, page.afterSeq || Number.MAX_SAFE_INTEGER, page.limit + 1);
      return toPage((raws as Record<string, unknown>[]).map(DELIVERY_ROW.fromRow), page.limit);
    },

    /** Each user with pending deliveries (of enabled webhooks) and when the next is due (ms). */
    pendingUsers: () => selectPendingUsers.all() as { userId: string; nextMs: number }[],

    /** Up to `limit` of the user's deliveries due at `nowMs`, the longest due first. */
    dueDeliveries: (userId: string, nowMs: number, limit: number) => selectDueOfUser.all(userId, nowMs, limit) as string[],

    /** What an attempt of a pending delivery needs, its secrets opened; undefined once it is no longer pending or its webhook is disabled or gone. */
    target(id: string, nowMs: number): DeliveryTarget | undefined {
      type Raw = Omit<DeliveryTarget, 'secrets'> & { secret: string; previousSecret: string | null; previousUntil: number | null };
      const raw = selectTarget.get(id) as Raw | undefined;
      if (raw === undefined) return undefined;
      const secrets = [sealer.open(raw.secret)];
      if (raw.previousSecret !== null && raw.previousUntil !== null && raw.previousUntil > nowMs)
        secrets.push(sealer.open(raw.previousSecret));
      return { id: raw.id, userId: raw.userId, url: raw.url, secrets, payload: raw.payload, attempts: raw.attempts };
    },

    /**
     * Records an attempt. A failure starts (or continues) the webhook's failing streak; a streak
     * of `disableAfterMs` disables the webhook with a reason. A delivered one ends the streak.
     */
    recordAttempt(id: string, result: AttemptResult, nowMs: number, disableAfterMs: number): { disabled: boolean } {
      return recordAttemptInTransaction(id, result, nowMs, disableAfterMs);
    },
  };
}
