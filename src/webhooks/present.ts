// The JSON shapes of a webhook (never its secret) and of a delivery.
import { formatTimestamp } from '../lib/ids.js';
import type { CreatedWebhook, Delivery, Webhook } from './schema.js';
import type { DeliveryRow, WebhookRow } from './store.js';

export function presentWebhook(webhook: WebhookRow): Webhook {
  const until = webhook.previousSecretUntil;
  return {
    id: webhook.id,
    userId: webhook.userId,
    url: webhook.url,
    events: webhook.events as Webhook['events'],
    description: webhook.description,
    enabled: webhook.enabled,
    disabledReason: webhook.disabledReason,
    previousSecretExpiresAt: until !== null && until > Date.now() ? formatTimestamp(until) : null,
    createdAt: webhook.createdAt,
    updatedAt: webhook.updatedAt,
  };
}

/** The webhook as creation answers it: with its secret, this once. */
export function presentCreatedWebhook(webhook: WebhookRow): CreatedWebhook {
  if (webhook.secret === undefined) throw new Error('only a webhook just created carries its secret');
  return Object.assign(presentWebhook(webhook), { secret: webhook.secret });
}

export function presentDelivery(delivery: DeliveryRow): Delivery {
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    lastStatusCode: delivery.lastStatusCode,
    lastError: delivery.lastError,
    nextAttemptAt: delivery.status === 'pending' && delivery.nextAttemptMs !== null ? formatTimestamp(delivery.nextAttemptMs) : null,
    createdAt: delivery.createdAt,
    deliveredAt: delivery.deliveredAt,
  };
}
