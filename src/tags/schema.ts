// The shapes of `/tags`: request bodies and the tag as answered.
import * as v from 'valibot';
import { IdSchema, NameSchema } from '../http/validate.js';
import { Id, Timestamp } from '../http/shapes.js';

export const DEFAULT_TAG_COLOR = '#0e8a16';

/** A CSS hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa. */
export const ColorSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.regex(/^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i, 'must be a hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa'),
);

export const CreateTagSchema = v.object({
  name: NameSchema,
  color: v.optional(ColorSchema, DEFAULT_TAG_COLOR),
  /** Accepted as the original API shows it; must be the caller's own id. */
  userId: v.optional(IdSchema),
});

export const UpdateTagSchema = v.object({ name: v.optional(NameSchema), color: v.optional(ColorSchema), userId: v.optional(IdSchema) });

export const TagSchema = v.strictObject({
  id: Id,
  userId: Id,
  name: v.string(),
  color: v.pipe(v.string(), v.description('A CSS hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa.')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Tag = v.InferOutput<typeof TagSchema>;
