// `/mcp`: the caller's agents as an MCP server (Streamable HTTP), served by the official SDK's
// handler. It is stateless — no session, nothing kept between requests — so any process serving
// the database answers any request, and a restart loses nothing: 2026-07-28 clients send each
// request on its own, and 2025-era clients (initialize first) are served by the SDK's stateless
// lane, each request by a fresh server instance. Authentication is ours: the route takes an API
// token like every other, checked on every request (a revoked token stops at once).
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import * as v from 'valibot';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { AppContext } from '../http/context.js';
import { defineRoute, RESPONSE_WRITTEN, type Route } from '../http/route.js';
import type { Logger } from '../lib/log.js';
import { describeError } from '../lib/log.js';
import { packageVersion } from '../lib/version.js';
import { createMcpTools, MCP_PAGE_SIZE, type McpToolsDeps } from './tools.js';

export const MCP_PATH = '/mcp';

type Sdk = typeof import('@modelcontextprotocol/server');

/** The caller a request's server instance serves, handed through the SDK's `authInfo` (never the token's secret). */
const callerAuth = (userId: string, tokenId: string): AuthInfo => ({ token: tokenId, clientId: userId, scopes: [] });

export function mcpRoutes(deps: McpToolsDeps & { log: Logger }): Route[] {
  const tools = createMcpTools(deps);
  const version = packageVersion();

  /**
   * The SDK's handler, made at the first /mcp request: the SDK's module (and the schemas it makes
   * when loaded) costs several MiB of memory that a service no MCP host reaches never spends.
   */
  let handlerOnce: Promise<ReturnType<Sdk['createMcpHandler']>> | undefined;
  const handlerOf = () =>
    (handlerOnce ??= import('@modelcontextprotocol/server').then(handlerWith, (error: unknown) => {
      handlerOnce = undefined;
      throw error;
    }));

  const handlerWith = (sdk: Sdk) =>
    sdk.createMcpHandler(
      ({ authInfo }) => {
        if (!authInfo) throw new Error('an MCP request reached the server without its caller');
        return serverFor(sdk, authInfo.clientId);
      },
      {
        legacy: 'stateless',
        onerror: (error) => deps.log.info({ msg: 'MCP request refused or failed', error: describeError(error) }),
      },
    );

  /** One server instance for one request, bound to its caller. */
  const serverFor = ({ Server, ProtocolError, ProtocolErrorCode }: Sdk, userId: string) => {
    const server = new Server({ name: 'agent-service', version }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', (request) => {
      const page = tools.list(userId, request.params?.cursor);
      if (!page)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          'Unknown cursor (its agent may have been deleted): list the tools again from the start.',
        );
      return page;
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      const result = await tools.call(userId, name, args, ctx.mcpReq.signal);
      if (!result) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `There is no tool named "${name.slice(0, 100)}".`);
      return result;
    });
    return server;
  };

  return [
    defineRoute({
      method: 'post',
      path: MCP_PATH,
      root: true,
      operationId: 'mcp',
      summary: 'MCP server: your agents as tools',
      description:
        'The Model Context Protocol over Streamable HTTP (stateless: no session; clients of the 2026-07-28 and of the 2025 protocol versions). ' +
        'Tools: one per agent of the caller (its name in lower case, other characters as `_`, at most 48 characters, `_2`, `_3` … for later agents of the same name), ' +
        'input `{ input, sessionId?, <each variable of its prompt> }` (`tools/list` answers ' +
        MCP_PAGE_SIZE +
        ' agents a page, oldest first, joined by `nextCursor`), each call an ordinary recorded run answering its text and `structuredContent` ' +
        '`{ runId, sessionId, output, sources }` (a failed run: `isError` with the reason); and `search_documents` `{ query, limit? }`. ' +
        'Without a valid API token: 401 with `WWW-Authenticate: Bearer`. The body is a JSON-RPC message; the answer is the JSON-RPC answer, not in the envelope ' +
        '(to a client of the 2025 versions, as one `message` event of a `text/event-stream`, as that transport has it). GET and DELETE (sessions) are not served: 405.',
      tag: 'MCP',
      auth: true,
      body: v.unknown(),
      success: {
        status: 200,
        description: 'The JSON-RPC answer (202 with no body for a notification).',
        raw: v.record(v.string(), v.unknown()),
      },
      handler: async ({ ctx, caller }): Promise<typeof RESPONSE_WRITTEN> => {
        const handler = await handlerOf();
        const response = await handler.fetch(webRequest(ctx), {
          authInfo: callerAuth(caller.id, caller.tokenId),
          parsedBody: ctx.request.body,
        });
        await writeResponse(ctx, response);
        return RESPONSE_WRITTEN;
      },
    }),
  ];
}

/** The request as the SDK's fetch-shaped handler takes it; its signal fires when the client goes away. */
function webRequest(ctx: AppContext): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
  }
  const gone = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) gone.abort();
  });
  // The body was read (and bounded) by the body parser; the SDK is given it parsed.
  return new Request(`http://localhost${ctx.originalUrl}`, { method: ctx.method, headers, signal: gone.signal });
}

const isJson = (contentType: string | null) => contentType !== null && /^application\/json\s*(;|$)/i.test(contentType);

/** Writes the SDK's answer to the Node response (Koa stays out of it). */
async function writeResponse(ctx: AppContext, response: Response): Promise<void> {
  ctx.respond = false;
  const { res } = ctx;
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  // A JSON answer is whole when the SDK hands it over: sent as one buffer, without a stream
  // converted from the web's kind to Node's (an event stream is piped as it comes).
  if (isJson(response.headers.get('content-type'))) {
    res.end(Buffer.from(await response.arrayBuffer()));
    return;
  }
  await new Promise<void>((resolve) => {
    const body = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
    body.on('error', () => res.destroy());
    res.once('finish', resolve);
    res.once('close', resolve);
    body.pipe(res);
  });
}
