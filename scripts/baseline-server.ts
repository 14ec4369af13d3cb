// The plain reference `npm run bench` compares the service with: node:http doing the same work per
// request (scripts/bench/reference-work.ts: the service's stores, schemas, sealer and presenters)
// and nothing else: no framework, no request ids, no extra headers, no logging.
//
// It opens an already seeded database and is started by the benchmark as a child process:
//   DATABASE_PATH=file.db PORT=0 SECRET_KEY=<hex> node --import tsx scripts/baseline-server.ts
// With OPENAI_BASE_URL set, it also runs agents (plain JSON, POST /api/v1/agents/{id}/invoke)
// against that model endpoint.
// On listening it writes one JSON line `{"msg":"listening","url":"http://127.0.0.1:PORT"}`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, invalidJson, notFound } from '../src/http/errors.js';
import { referenceWork } from './bench/reference-work.js';

const work = referenceWork();
const AGENT_PATH = /^\/api\/v1\/agents\/([^/?]+)$/;
const INVOKE_PATH = /^\/api\/v1\/agents\/([^/?]+)\/invoke$/;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(invalidJson());
      }
    });
    req.on('error', reject);
  });
}

const header = (req: IncomingMessage): string | undefined => {
  const value = req.headers['autorization'] ?? req.headers['authorization'];
  return typeof value === 'string' ? value : undefined;
};

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const method = req.method;
  const ok = (data: unknown, status = 200, headers?: Record<string, string>) => send(res, status, { success: true, data }, headers);

  if (method === 'GET' && path === '/healthz') return ok(work.health());
  if (method === 'POST' && path === '/api/v1/auth/sign-in') return ok(await work.signIn(await readJson(req)));
  if (method === 'POST' && path === '/api/v1/tools') {
    const caller = work.authenticate(header(req));
    return ok(work.createTool(caller, await readJson(req)), 201);
  }
  if (path === '/api/v1/agents') {
    const caller = work.authenticate(header(req));
    if (method === 'GET') {
      const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
      const { data, nextAfter } = work.listAgents(caller, Object.fromEntries(params));
      if (nextAfter === undefined) return ok(data);
      params.set('after', nextAfter);
      return ok(data, 200, { link: `<http://${req.headers.host}${path}?${params}>; rel="next"` });
    }
    if (method === 'POST') return ok(work.createAgent(caller, await readJson(req)), 201);
  }
  const agentPath = AGENT_PATH.exec(path);
  if (agentPath) {
    const caller = work.authenticate(header(req));
    if (method === 'GET') return ok(work.getAgent(caller, decodeURIComponent(agentPath[1])));
    if (method === 'PATCH') return ok(work.updateAgent(caller, decodeURIComponent(agentPath[1]), await readJson(req)));
  }
  const invokePath = method === 'POST' ? INVOKE_PATH.exec(path) : null;
  if (invokePath) {
    const caller = work.authenticate(header(req));
    return ok(await work.invokeAgent(caller, decodeURIComponent(invokePath[1]), await readJson(req)));
  }
  throw notFound('Route');
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    const known = error instanceof ApiError;
    if (!known) process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    const status = known ? error.status : 500;
    if (!res.headersSent)
      send(res, status, {
        success: false,
        data: null,
        error: { code: known ? error.code : 'internal', message: (error as Error).message },
      });
  });
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` })}\n`);
});

const stop = () =>
  server.close(() => {
    work.close();
    process.exit(0);
  });
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
