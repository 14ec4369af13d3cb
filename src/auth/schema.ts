// The shapes of sign-up, sign-in and the account: request bodies and answers.
import * as v from 'valibot';
import { NameSchema } from '../http/validate.js';
import { ApiTokenSchema } from '../api-tokens/schema.js';
import { SignedUpUserSchema, UserSchema } from '../users/schema.js';

const EmailSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(254, 'must be at most 254 characters'),
  v.email('must be a valid email address'),
);

/** A new password: 8 to 1024 characters (not trimmed: every character counts). */
const NewPasswordSchema = v.pipe(
  v.string('must be a string'),
  v.minLength(8, 'must be at least 8 characters'),
  v.maxLength(1024, 'must be at most 1024 characters'),
);

/** A password being checked: any non-empty string up to the longest a user can have. */
const GivenPasswordSchema = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(1024, 'must be at most 1024 characters'),
);

/** Sign-up: `name` is optional (the part of the email before "@" when missing). */
export const SignUpSchema = v.object({ name: v.optional(NameSchema), email: EmailSchema, password: NewPasswordSchema });

/** The name of a user who signed up without one: the part of the email before "@". */
export function defaultUserName(email: string): string {
  return email.slice(0, email.lastIndexOf('@')).slice(0, 200) || email.slice(0, 200);
}

export const SignInSchema = v.object({
  email: v.pipe(v.string('must be a string'), v.trim(), v.toLowerCase(), v.maxLength(254, 'must be at most 254 characters')),
  password: GivenPasswordSchema,
});

export const UpdateMeSchema = v.pipe(
  v.object({
    name: v.optional(NameSchema),
    password: v.optional(NewPasswordSchema),
    currentPassword: v.optional(GivenPasswordSchema),
  }),
  v.forward(
    v.check((input) => input.password === undefined || input.currentPassword !== undefined, 'is required to change the password'),
    ['currentPassword'],
  ),
);

export const DeleteMeSchema = v.object({ password: GivenPasswordSchema });

export const SignUpResultSchema = v.strictObject({ user: SignedUpUserSchema });

export const SignInResultSchema = v.strictObject({
  user: UserSchema,
  token: v.pipe(v.string(), v.description('The bearer secret: send it as `Autorization: Bearer <token>` (or `Authorization`).')),
  apiToken: ApiTokenSchema,
});
