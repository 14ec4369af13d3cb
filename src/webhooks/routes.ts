// `/webhooks`: the caller's receivers of events (list, create, get, PATCH, delete), their delivery
// log, a new secret, and a test event.
import { notFound } from '../http/errors.js';
import { checkPublicUrl, publicUrlText, type PublicUrlRule } from '../http/public-url.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { defineRoute, type Route } from '../http/route.js';
import { ListQuerySchema, pageRequest } from '../http/validate.js';
import { formatTimestamp, timestamp } from '../lib/ids.js';
import { presentCreatedWebhook, presentDelivery, presentWebhook } from './present.js';
import {
  CreatedWebhookSchema,
  CreateWebhookSchema,
  DeliverySchema,
  RotatedSecretSchema,
  TEST_EVENT,
  UpdateWebhookSchema,
  WEBHOOK_EVENTS,
  WebhookSchema,
} from './schema.js';
import type { WebhookRow, WebhookStore } from './store.js';

/** With the rule a webhook's URL is checked by when it is stored. */
export interface WebhookRouteDeps extends PublicUrlRule {
  webhooks: WebhookStore;
  /** Tells the dispatcher a delivery was put in the outbox. */
  wake(): void;
}

const TAG = 'Webhooks';
const missing = () => notFound('Webhook');
const SSRF_TEXT = publicUrlText('The URL');

export function webhookRoutes(deps: WebhookRouteDeps): Route[] {
  const { webhooks, wake } = deps;
  const resource = resourceRoutes({
    path: '/webhooks',
    tag: TAG,
    names: { one: 'webhook', One: 'Webhook', Many: 'Webhooks', what: 'Webhook' },
    schema: WebhookSchema,
    present: (row: WebhookRow) => presentWebhook(row),
    store: webhooks,
    create: {
      body: CreateWebhookSchema,
      description:
        `\`events\`: one or more of ${WEBHOOK_EVENTS.map((event) => `\`${event}\``).join(', ')}, or \`["*"]\` for all. ` +
        'Each event is POSTed to the URL as `{ type, timestamp, data }` (`data`: the run or document as the API shows it), signed as the ' +
        'Standard Webhooks specification says (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer holds the `secret`, ' +
        `shown this once. ${SSRF_TEXT}`,
      check: (input) => checkPublicUrl(input.url, 'url', deps),
      answer: { schema: CreatedWebhookSchema, present: presentCreatedWebhook },
    },
    update: {
      body: UpdateWebhookSchema,
      description: `\`enabled: true\` also clears a \`disabledReason\`. ${SSRF_TEXT}`,
      check: (change) => checkPublicUrl(change.url, 'url', deps),
      // Enabled again: what waited while it was disabled is due.
      after: (row) => row.enabled && wake(),
    },
    delete: { answers: 'null', description: 'Its deliveries are deleted too, pending ones included.' },
  });

  const deliveries = defineRoute({
    method: 'get',
    path: '/webhooks/:id/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: "List a webhook's deliveries",
    description:
      'Newest first. A delivery is `pending` until the receiver answers 2xx within 10 s (`delivered`); a failed attempt is retried after ' +
      'about 5 s, 5 min, 30 min, 2 h, 5 h and 10 h, then the delivery is `failed`.',
    tag: TAG,
    auth: true,
    query: ListQuerySchema,
    success: { status: 200, description: "A page of the webhook's deliveries, newest first.", page: DeliverySchema },
    handler: ({ caller, params, query }) => {
      if (!webhooks.get(caller.id, params.id)) throw missing();
      const page = pageRequest(query, (id) => webhooks.seqOfDelivery(caller.id, params.id, id));
      const rows = webhooks.listDeliveries(caller.id, params.id, page);
      return { rows: rows.rows.map(presentDelivery), hasMore: rows.hasMore };
    },
  });

  const rotate = defineRoute({
    method: 'post',
    path: '/webhooks/:id/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: "Rotate a webhook's secret",
    description:
      'Answers a new secret, shown this once. For 24 hours deliveries carry a signature made with the previous secret as well ' +
      '(the Standard Webhooks header holds both), so a receiver can switch without missing one.',
    tag: TAG,
    auth: true,
    success: { status: 200, description: 'The new secret.', data: RotatedSecretSchema },
    handler: ({ caller, params }) => {
      const rotated = webhooks.rotateSecret(caller.id, params.id);
      if (!rotated) throw missing();
      return { secret: rotated.secret, previousSecretExpiresAt: formatTimestamp(rotated.previousSecretUntil) };
    },
  });

  const test = defineRoute({
    method: 'post',
    path: '/webhooks/:id/test',
    operationId: 'sendWebhookTestEvent',
    summary: 'Send a test event',
    description: `Puts a \`${TEST_EVENT}\` event for this webhook in the outbox (whatever events it subscribes to), sent as any other. A disabled webhook sends nothing until it is enabled.`,
    tag: TAG,
    auth: true,
    success: { status: 202, description: 'The delivery, pending.', data: DeliverySchema },
    handler: ({ caller, params }) => {
      const webhook = webhooks.get(caller.id, params.id);
      if (!webhook) throw missing();
      const payload = JSON.stringify({ type: TEST_EVENT, timestamp: timestamp(), data: { webhookId: webhook.id } });
      const [delivery] = webhooks.enqueue(caller.id, [webhook.id], TEST_EVENT, payload);
      wake();
      return presentDelivery(delivery);
    },
  });

  return [...resource, deliveries, rotate, test];
}
