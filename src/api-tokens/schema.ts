// The shapes of `/api-tokens`: request bodies and the token as answered.
import * as v from 'valibot';
import { DescriptionSchema } from '../http/validate.js';
import { Id, NullTimestamp, Timestamp } from '../http/shapes.js';
import { formatTimestamp } from '../lib/ids.js';
import { UserSchema } from '../users/schema.js';

/** Days in each month of a common year; February has 29 in a leap year. */
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether the date an ISO 8601 timestamp starts with (YYYY-MM-DD) is on the calendar. The format
 * check allows any day up to 31 in any month, and Date.parse moves 2027-02-30 on to 2027-03-02.
 */
function isCalendarDate(timestamp: string): boolean {
  const [year, month, day] = timestamp.slice(0, 10).split('-').map(Number);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]);
}

/** 10000-01-01T00:00:00Z: the first time past what four-digit years can write. */
const YEAR_10000_MS = Date.UTC(10000, 0, 1);

/** Body of POST /api-tokens. */
export const CreateApiTokenSchema = v.object({
  description: v.optional(DescriptionSchema, ''),
  /** When the token stops working: an ISO 8601 time in the future; absent or null: never. */
  expiresAt: v.optional(
    v.nullable(
      v.pipe(
        v.string('must be an ISO 8601 date-time string'),
        v.isoTimestamp('must be an ISO 8601 date-time such as 2027-01-31T12:00:00Z'),
        v.check(isCalendarDate, 'must be a date that exists (such as 2027-02-28, not 2027-02-30)'),
        v.transform((text) => Date.parse(text)),
        // The format check also allows offsets Date.parse cannot read (`+01`, or a space before it).
        v.check((ms) => !Number.isNaN(ms), 'must be a date-time such as 2027-01-31T12:00:00Z or 2027-01-31T13:00:00+01:00'),
        v.check((ms) => ms > Date.now(), 'must be in the future'),
        // 9999-12-31T23:00:00-02:00 is in the year 10000 in UTC, which the API's timestamps cannot show.
        v.check((ms) => ms < YEAR_10000_MS, 'must be before the year 10000 (in UTC)'),
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
