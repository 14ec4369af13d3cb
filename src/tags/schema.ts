// Request bodies of `/tags`.
import * as v from 'valibot';
import { IdSchema, NameSchema } from '../http/validate.js';

export const DEFAULT_TAG_COLOR = '#0e8a16';

/** A CSS hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa. */
const ColorSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.regex(/^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i, 'must be a hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa'),
);

export const CreateTagSchema = v.object({
  name: NameSchema,
  color: v.optional(ColorSchema, DEFAULT_TAG_COLOR),
  /** Accepted as the interface shows it; must be the caller's own id. */
  userId: v.optional(IdSchema),
});

export const UpdateTagSchema = v.object({ name: v.optional(NameSchema), color: v.optional(ColorSchema), userId: v.optional(IdSchema) });
