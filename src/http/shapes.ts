// Pieces of the JSON shapes every resource answers with (ids, timestamps, the envelopes), as
// valibot schemas. Each resource's own shapes live in `src/<resource>/schema.ts`.
import * as v from 'valibot';
import { ERRORS } from './errors.js';

export const Id = v.pipe(v.string(), v.description('An opaque id (a UUID today; treat it as an opaque string).'));

export const Timestamp = v.pipe(
  v.string(),
  v.isoTimestamp(),
  v.metadata({ description: 'ISO 8601 in UTC with six fractional digits.', examples: ['2026-11-22T10:15:30.123456+00:00'] }),
);

export const NullTimestamp = v.nullable(Timestamp);

/** A related record the API names but this service does not fill in: always null. */
export const AlwaysNull = v.pipe(v.null(), v.description('Always null in this version.'));

/** `{}`: how a related record that is absent is shown. */
export const EmptyObject = v.pipe(v.strictObject({}), v.metadata({ maxProperties: 0, description: 'An empty object: no record.' }));

export const Integer = v.pipe(v.number(), v.integer());

/** `{ success: true, data }`: every success answer (but the OpenAPI document itself). */
export function successEnvelope<Data extends v.GenericSchema>(data: Data) {
  return v.strictObject({ success: v.literal(true), data });
}

export const FieldIssueSchema = v.strictObject({
  path: v.pipe(v.string(), v.description('The dotted field path; "" for the body itself.')),
  message: v.string(),
});

/** `{ success: false, data: null, error }`: every failure. */
export const ErrorEnvelopeSchema = v.strictObject({
  success: v.literal(false),
  data: v.null(),
  error: v.strictObject({
    code: v.picklist(ERRORS.map((error) => error.code)),
    message: v.string(),
    details: v.pipe(v.optional(v.array(FieldIssueSchema)), v.description('For validation_failed: one entry per bad field.')),
  }),
});

/** A yes-or-no query parameter: `true` or `false` (absent: false). */
export const QueryFlag = v.optional(
  v.pipe(
    v.picklist(['true', 'false'], 'must be true or false'),
    v.transform((word) => word === 'true'),
  ),
  'false',
);
