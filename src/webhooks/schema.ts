// The shapes of `/webhooks`: request bodies, the webhook and its deliveries as answered, and the
// events a webhook may subscribe to.
import * as v from 'valibot';
import { DescriptionSchema, httpUrlSchema } from '../http/validate.js';
import { Id, Integer, NullTimestamp, Timestamp } from '../http/shapes.js';

/** What a webhook can be told of; `*` subscribes to all of them. */
export const WEBHOOK_EVENTS = [
  'run.succeeded',
  'run.failed',
  'run.cancelled',
  'run.requires_action',
  'document.ready',
  'document.failed',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** The event of "send a test event": sent to the webhook whatever it subscribes to. */
export const TEST_EVENT = 'webhook.test';

const EVENT_NAMES = [...WEBHOOK_EVENTS, '*'] as const;
const MAX_EVENTS = EVENT_NAMES.length;

const EventsSchema = v.pipe(
  v.array(
    v.picklist(
      EVENT_NAMES,
      (issue) => `unknown event ${JSON.stringify(String(issue.input).slice(0, 80))}; one of ${EVENT_NAMES.join(', ')}`,
    ),
    'must be an array of event names',
  ),
  v.minLength(1, `must name at least one event (or "*" for all)`),
  v.maxLength(MAX_EVENTS, `must name at most ${MAX_EVENTS} events`),
  // Kept as given but without repeats, so a list shows what was meant.
  v.transform((events) => [...new Set(events)]),
);

const UrlSchema = httpUrlSchema('a receiver checks the webhook-signature header instead');

export const CreateWebhookSchema = v.object({
  url: UrlSchema,
  events: EventsSchema,
  description: v.optional(DescriptionSchema, ''),
});
export const UpdateWebhookSchema = v.object({
  url: v.optional(UrlSchema),
  events: v.optional(EventsSchema),
  description: v.optional(DescriptionSchema),
  enabled: v.optional(v.boolean('must be true or false')),
});
export type WebhookInput = v.InferOutput<typeof CreateWebhookSchema>;
export type WebhookChange = v.InferOutput<typeof UpdateWebhookSchema>;

const webhookEntries = {
  id: Id,
  userId: Id,
  url: v.string(),
  events: v.pipe(v.array(v.picklist(EVENT_NAMES)), v.description('The events it is sent; ["*"]: all.')),
  description: v.string(),
  enabled: v.boolean(),
  disabledReason: v.pipe(
    v.nullable(v.string()),
    v.description('Why the service disabled it (every delivery failed for 5 days); null when it did not.'),
  ),
  previousSecretExpiresAt: v.pipe(
    NullTimestamp,
    v.description('Until when the secret before the last rotation still signs deliveries too; null: none does.'),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

/** A webhook as answered: never its secret. */
export const WebhookSchema = v.strictObject(webhookEntries);
export type Webhook = v.InferOutput<typeof WebhookSchema>;

const SecretSchema = v.pipe(
  v.string(),
  v.description('The signing secret, `whsec_` and base64 of 24 random bytes: shown in this answer only, keep it.'),
);

/** What creating a webhook answers: the webhook and, this once, its secret. */
export const CreatedWebhookSchema = v.strictObject({ ...webhookEntries, secret: SecretSchema });
export type CreatedWebhook = v.InferOutput<typeof CreatedWebhookSchema>;

/** What a rotation answers. */
export const RotatedSecretSchema = v.strictObject({
  secret: SecretSchema,
  previousSecretExpiresAt: v.pipe(Timestamp, v.description('Until when the previous secret still signs deliveries as well.')),
});

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DeliverySchema = v.strictObject({
  id: v.pipe(v.string(), v.description('The `webhook-id` header: the same on every attempt of this delivery.')),
  webhookId: Id,
  event: v.string(),
  status: v.picklist(DELIVERY_STATUSES),
  attempts: Integer,
  lastStatusCode: v.pipe(v.nullable(Integer), v.description("The receiver's last HTTP status; null: it never answered.")),
  lastError: v.pipe(v.nullable(v.string()), v.description('Why the last attempt failed; null after a delivered one.')),
  nextAttemptAt: v.pipe(NullTimestamp, v.description('When it is tried next while pending; null otherwise.')),
  createdAt: Timestamp,
  deliveredAt: NullTimestamp,
});
export type Delivery = v.InferOutput<typeof DeliverySchema>;
