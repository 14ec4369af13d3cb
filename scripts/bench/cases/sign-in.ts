// The sign-in case (--only sign-in): POST /auth/sign-in with the right password (a password hash
// each), closed loop on the shared servers with two connections.
import { OPTS, PASSWORD } from '../options.js';
import type { Load } from '../load.js';
import { closedLoop } from '../shared-servers.js';
import type { SharedCase } from '../case.js';

export const signIn: SharedCase = {
  name: 'sign-in',
  uses: 'shared servers',
  targets: [],
  async run({ main, servers }) {
    const load: Load = {
      expectStatus: 200,
      // Each connection's sign-in still runs after the load generator stops: few connections, and
      // no unmeasured run right before a measured one (its hashes would still be running in it).
      // Two, because the service hashes one password at a time and refuses at once (503) a check
      // that would wait, its own hash included, more than about a second: with 10 connections it
      // answered ~1,800 such 503s a second between its hashes, and the case measured that guard
      // (the sign-in-flood case does) instead of sign-ins.
      connections: 2,
      settle: 0,
      requests: main.users.map((user) => ({
        method: 'POST',
        path: '/api/v1/auth/sign-in',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email, password: PASSWORD }),
      })),
    };
    const seconds = Math.max(OPTS.duration, OPTS.quick ? 2 : 3);
    return { rows: [await closedLoop(servers, 'sign-in', `POST /auth/sign-in (${load.connections} connections)`, load, seconds)] };
  },
};
