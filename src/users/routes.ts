// The original API's user endpoints, kept for its clients: the caller, by `me` or by its own id.
import { notFound } from '../http/errors.js';
import { defineRoute, type Route } from '../http/route.js';
import { presentUser } from './present.js';
import { UserSchema } from './schema.js';

export function userRoutes(): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/users/me',
      operationId: 'getUserMe',
      summary: 'Get the caller (the original API)',
      tag: 'Auth',
      auth: true,
      success: { status: 200, description: 'The caller, as GET /auth/me answers.', data: UserSchema },
      handler: ({ caller }) => presentUser(caller),
    }),
    defineRoute({
      method: 'get',
      path: '/users/:id',
      operationId: 'getUser',
      summary: 'Get a user (the original API)',
      description: "The caller when the id is the caller's; any other id is a 404.",
      tag: 'Auth',
      auth: true,
      success: { status: 200, description: 'The caller.', data: UserSchema },
      handler: ({ caller, params }) => {
        if (params.id !== caller.id) throw notFound('User');
        return presentUser(caller);
      },
    }),
  ];
}
