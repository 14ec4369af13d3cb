// Webhook secrets and signatures as the Standard Webhooks specification writes them: a secret is
// `whsec_` + base64 of random bytes (the bytes are the HMAC key), and `webhook-signature` holds
// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` once per secret that signs, space-separated.
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** The headers of one attempt: the same `id` on every attempt of a delivery, `timestampSeconds` the attempt's own. */
export function signatureHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  const signed = `${id}.${timestampSeconds}.${body}`;
  const signatures = secrets.map(
    (secret) =>
      `v1,${createHmac('sha256', Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'))
        .update(signed)
        .digest('base64')}`,
  );
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}
