// The work one request of each benchmarked endpoint does, shared by the two reference servers
// (scripts/baseline-server.ts on plain node:http, scripts/bench/reference-koa.ts on bare Koa): the
// service's own stores (the same SQL, prepared once, with the same pragmas), its valibot schemas,
// sealer and presenters, called directly. What the service adds on top (defineRoute, middleware,
// request ids, headers) is what the ratios to these servers measure.
import { openDatabase } from '../../src/db.js';
import { createStores } from '../../src/stores.js';
import { createSealer } from '../../src/lib/secrets.js';
import { formatTimestamp } from '../../src/lib/ids.js';
import { parse, IdSchema, ListQuerySchema, pageRequest } from '../../src/http/validate.js';
import { notFound, unauthorized } from '../../src/http/errors.js';
import { presentAgent } from '../../src/agents/present.js';
import { presentTool } from '../../src/tools/present.js';
import { presentUser } from '../../src/users/present.js';
import { presentApiToken } from '../../src/api-tokens/present.js';
import { CreateAgentSchema, UpdateAgentSchema } from '../../src/agents/schema.js';
import { CreateToolSchema } from '../../src/tools/schema.js';
import { SignInSchema } from '../../src/auth/schema.js';
import { verifyPassword } from '../../src/auth/password.js';
import type { Caller } from '../../src/http/context.js';


const BEARER = /^\s*bearer\s+(\S+)\s*$/i;
const LAST_USED_RESOLUTION_MS = 60_000;
const SIGN_IN_TOKEN_TTL_MS = 30 * 86_400_000;

/** Opens DATABASE_PATH (never creating the schema) with SECRET_KEY, or exits. */
export function referenceWork() {
  const path = process.env.DATABASE_PATH;
  const key = Buffer.from(process.env.SECRET_KEY ?? '', 'hex');
  if (!path || key.length !== 32) {
    process.stderr.write('DATABASE_PATH and SECRET_KEY (64 hex digits) are required\n');
    process.exit(2);
  }
  const db = openDatabase(path);
  const stores = createStores(db, createSealer(key));
  const health = db.prepare('SELECT 1').pluck();
  // As the service: token uses noted per request, written every 5 s in one transaction.
  setInterval(() => stores.apiTokens.flushTouches(), 5_000).unref();
  const asObject = (body: unknown) => (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {});

  return {
    db,
    health: () => (health.get(), { status: 'ok' }),

    /** The caller of a request with this Autorization/Authorization header, as the service checks it. */
    authenticate(header: string | undefined): Caller {
      const secret = header === undefined ? undefined : BEARER.exec(header)?.[1];
      if (secret === undefined) throw unauthorized();
      const found = secret.length <= 256 ? stores.apiTokens.findCaller(secret) : undefined;
      if (found === undefined) throw unauthorized('The API token is unknown or revoked.');
      const nowMs = Date.now();
      if (found.expiresAt !== null && Date.parse(found.expiresAt) <= nowMs) throw unauthorized('The API token has expired.');
      if (found.lastUsedAt === null || nowMs - Date.parse(found.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
        stores.apiTokens.touch(found.tokenId, formatTimestamp(nowMs));
      }
      const { expiresAt, lastUsedAt, ...caller } = found;
      return caller;
    },

    getAgent(caller: Caller, rawId: string) {
      const id = parse(IdSchema, rawId, 'id');
      const agent = stores.agents.get(caller.id, id);
      if (!agent) throw notFound('Agent');
      return presentAgent(agent, caller);
    },

    /** A page of agents and the id to continue after, if more exist. */
    listAgents(caller: Caller, query: Record<string, string>): { data: unknown[]; nextAfter?: string } {
      const q = parse(ListQuerySchema, query);
      const page = stores.agents.list(
        caller.id,
        pageRequest(q, (id) => stores.agents.seqOf(caller.id, id)),
      );
      return { data: page.rows.map((row) => presentAgent(row, caller)), nextAfter: page.hasMore ? page.rows.at(-1)?.id : undefined };
    },

    createAgent(caller: Caller, body: unknown) {
      return presentAgent(stores.agents.create(caller.id, parse(CreateAgentSchema, asObject(body))), caller);
    },

    updateAgent(caller: Caller, rawId: string, body: unknown) {
      const id = parse(IdSchema, rawId, 'id');
      const agent = stores.agents.update(caller.id, id, parse(UpdateAgentSchema, asObject(body)));
      if (!agent) throw notFound('Agent');
      return presentAgent(agent, caller);
    },

    createTool(caller: Caller, body: unknown) {
      return presentTool(stores.tools.create(caller.id, parse(CreateToolSchema, asObject(body))), caller);
    },

    async signIn(body: unknown) {
      const input = parse(SignInSchema, asObject(body));
      const user = stores.users.getByEmail(input.email);
      if (!user || !(await verifyPassword(input.password, user.passwordHash))) throw unauthorized('The email or password is wrong.');
      const token = stores.apiTokens.create(user.id, { description: 'Created by sign-in', expiresAt: formatTimestamp(Date.now() + SIGN_IN_TOKEN_TTL_MS) });
      return { user: presentUser(user), token: token.token, apiToken: presentApiToken(token, user) };
    },
  };
}
