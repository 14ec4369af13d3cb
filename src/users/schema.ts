// The shapes of a user as answered.
import * as v from 'valibot';
import { AlwaysNull, Id, Timestamp } from '../http/shapes.js';

/** A user as nested in other records and as GET /auth/me answers: never the password hash. */
export const UserSchema = v.strictObject({
  id: Id,
  email: v.pipe(v.string(), v.email()),
  name: v.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: AlwaysNull,
});
export type User = v.InferOutput<typeof UserSchema>;

/** The user as sign-up answers: with the password hash and null related records. */
export const SignedUpUserSchema = v.strictObject({
  ...UserSchema.entries,
  password: v.pipe(v.string(), v.description('The one-way scrypt hash of the password (never the password).')),
  profile: AlwaysNull,
  Agent: AlwaysNull,
  ApiToken: AlwaysNull,
  Document: AlwaysNull,
});
export type SignedUpUser = v.InferOutput<typeof SignedUpUserSchema>;
