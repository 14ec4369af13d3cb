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
import { ApiError, notFound, unauthorized } from '../../src/http/errors.js';
import { presentAgent } from '../../src/agents/present.js';
import { presentTool } from '../../src/tools/present.js';
import { presentUser } from '../../src/users/present.js';
import { presentApiToken } from '../../src/api-tokens/present.js';
import { CreateAgentSchema, UpdateAgentSchema } from '../../src/agents/schema.js';
import { CreateToolSchema } from '../../src/tools/schema.js';
import { SignInSchema } from '../../src/auth/schema.js';
import { verifyPassword } from '../../src/auth/password.js';
import type { Caller } from '../../src/http/context.js';
import { InvokeSchema } from '../../src/runs/schema.js';
import { contextChunks, fillPrompt, sourcesOf, systemMessage } from '../../src/runs/context.js';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;
const LAST_USED_RESOLUTION_MS = 60_000;
const SIGN_IN_TOKEN_TTL_MS = 30 * 86_400_000;

/** DATABASE_PATH and SECRET_KEY of a reference server's environment, or exits. */
function fromEnvironment(): { path: string; key: Buffer } {
  const path = process.env.DATABASE_PATH;
  const key = Buffer.from(process.env.SECRET_KEY ?? '', 'hex');
  if (!path || key.length !== 32) {
    process.stderr.write('DATABASE_PATH and SECRET_KEY (64 hex digits) are required\n');
    process.exit(2);
  }
  return { path, key };
}

/** Opens the seeded database at `path` (never creating the schema) with the sealing key `key`. */
export function referenceWork({ path, key } = fromEnvironment()) {
  const db = openDatabase(path);
  const stores = createStores(db, createSealer(key));
  const health = db.prepare('SELECT 1').pluck();
  // As the service: token uses noted per request, written every 5 s in one transaction.
  const flushTimer = setInterval(() => stores.apiTokens.flushTouches(), 5_000).unref();
  // The model endpoint of every agent run (the operator's OPENAI_BASE_URL: the benchmark's fake model).
  const modelBase = process.env.OPENAI_BASE_URL
    ? new URL(`${process.env.OPENAI_BASE_URL.replace(/\/+$/, '')}/chat/completions`)
    : undefined;
  const modelAgent = new HttpAgent({ keepAlive: true, maxSockets: 256 });
  const asObject = (body: unknown) => (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {});

  return {
    /** Stops the flush of token uses and closes the database. */
    close() {
      clearInterval(flushTimer);
      db.close();
    },
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

    /**
     * A plain (not streamed) run of an agent without tools: what the service's run does for it —
     * the agent and its model settings (the key unsealed), its prompt filled, its documents
     * searched, its tools listed, the run row written through the service's run store — with the
     * upstream call made by node:http to OPENAI_BASE_URL.
     */
    async invokeAgent(caller: Caller, rawId: string, body: unknown) {
      const id = parse(IdSchema, rawId, 'id');
      const input = parse(InvokeSchema, asObject(body));
      if (input.stream) throw new ApiError(422, 'validation_failed', 'This reference does not stream.');
      const agent = stores.agents.getForRun(caller.id, id);
      if (!agent) throw notFound('Agent');
      const { llm } = agent;
      if (!modelBase) throw new ApiError(422, 'validation_failed', 'OPENAI_BASE_URL is not set.');
      const prompt = agent.promptId ? stores.prompts.get(caller.id, agent.promptId) : undefined;
      const system = prompt ? fillPrompt(prompt, input.variables, input.input) : null;
      const started = performance.now();
      const run = stores.runs.startRun({
        userId: caller.id,
        agentId: id,
        parentRunId: null,
        sessionId: input.sessionId,
        input: input.input,
        model: llm.model,
      });
      if (!run) throw notFound('Agent');
      const chunks = contextChunks(stores.search, caller.id, id, input.input);
      const tools = stores.tools.listForRun(caller.id, id);
      if (tools.length > 0) throw new ApiError(422, 'validation_failed', 'This reference runs agents without tools.');
      const payload = JSON.stringify({
        model: llm.model,
        messages: [
          { role: 'system', content: systemMessage(system, chunks) },
          { role: 'user', content: input.input },
        ],
      });
      const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            agent: modelAgent,
            host: modelBase.hostname,
            port: modelBase.port,
            path: modelBase.pathname,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(payload),
              authorization: `Bearer ${llm.apiKey ?? 'none'}`,
            },
          },
          (res) => {
            const parts: Buffer[] = [];
            res.on('data', (part: Buffer) => parts.push(part));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
      const ms = Math.round(performance.now() - started);
      const sources = sourcesOf(chunks);
      if (reply.status !== 200) {
        stores.runs.finishRun(
          run.id,
          {
            status: 'failed',
            output: null,
            error: `The model endpoint answered ${reply.status}`,
            steps: [],
            sources,
            warnings: [],
            usage: null,
            ms,
          },
          null,
        );
        throw new ApiError(502, 'upstream_error', `The model endpoint answered ${reply.status}.`);
      }
      const completion = JSON.parse(reply.text) as {
        choices: { message?: { content?: string | null } }[];
        usage?: { prompt_tokens: number; completion_tokens: number };
      };
      const output = completion.choices[0]?.message?.content ?? '';
      const usage = completion.usage
        ? { promptTokens: completion.usage.prompt_tokens, completionTokens: completion.usage.completion_tokens }
        : null;
      stores.runs.finishRun(run.id, { status: 'succeeded', output, error: null, steps: [], sources, warnings: [], usage, ms }, null);
      return { runId: run.id, sessionId: input.sessionId, output, model: llm.model, steps: [], sources, warnings: [], usage, ms };
    },

    async signIn(body: unknown) {
      const input = parse(SignInSchema, asObject(body));
      const user = stores.users.getByEmail(input.email);
      if (!user || !(await verifyPassword(input.password, user.passwordHash))) throw unauthorized('The email or password is wrong.');
      const token = stores.apiTokens.create(user.id, {
        description: 'Created by sign-in',
        expiresAt: formatTimestamp(Date.now() + SIGN_IN_TOKEN_TTL_MS),
      });
      return { user: presentUser(user), token: token.token, apiToken: presentApiToken(token, user) };
    },
  };
}
