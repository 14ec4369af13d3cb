// The shapes of `/api-tokens`: request bodies and the token as answered.
import * as v from 'valibot';
import { DescriptionSchema } from '../http/validate.js';
import { Id, NullTimestamp, Timestamp } from '../http/shapes.js';
import { formatTimestamp } from '../lib/ids.js';
import { UserSchema } from '../users/schema.js';

/** Body of POST /api-tokens. */
export const CreateApiTokenSchema = v.object({
  description: v.optional(DescriptionSchema, ''),
  /** When the token stops working: an ISO 8601 time in the future; absent or null: never. */
  expiresAt: v.optional(
    v.nullable(
      v.pipe(
        v.string('must be an ISO 8601 date-time string'),
        v.isoTimestamp('must be an ISO 8601 date-time such as 2027-01-31T12:00:00Z'),
        v.transform((text) => Date.parse(text)),
        v.check((ms) => ms > Date.now(), 'must be in the future'),
        v.transform(formatTimestamp),
      ),
    ),
    null,
  ),
});
/** Body of PATCH /api-tokens/{id}. */
export const UpdateApiTokenSchema = v.object({ description: DescriptionSchema });

export const ApiTokenSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  description: v.string(),
  token: v.pipe(v.string(), v.description('The bearer secret, in full (every token response returns it).')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  expiresAt: v.pipe(NullTimestamp, v.description('When the token stops working; null: never.')),
  lastUsedAt: v.pipe(NullTimestamp, v.description('When a request last used the token (to the minute); null: never used.')),
});
export type ApiToken = v.InferOutput<typeof ApiTokenSchema>;
