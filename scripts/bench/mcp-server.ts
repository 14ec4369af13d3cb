// The MCP server the mcp case of `npm run bench` gives its agents as a tool: the official 2.x SDK's
// stateless handler with one tool, `add`, answering at once. It times itself: from a request's
// arrival to the end of its answer, summed over the requests since the last look; GET /own-time
// answers `{ requests, ms }` and starts the sum again, so the benchmark can take the server's own
// time out of a run's.
//
//   PORT=0 node --import tsx scripts/bench/mcp-server.ts
// On listening it writes one JSON line `{"msg":"listening","url":"http://127.0.0.1:PORT"}`; the MCP
// endpoint is that URL + `/mcp`. GET /healthz answers 200.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'bench-mcp', version: '1.0.0' });
  const inputSchema = fromJsonSchema<{ a: number; b: number }>({
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  } as never);
  server.registerTool('add', { description: 'Adds two numbers.', inputSchema }, async ({ a, b }) => ({
    content: [{ type: 'text', text: `The sum is ${a + b}.` }],
    structuredContent: { sum: a + b },
  }));
  return server;
});

let requests = 0;
let ownMs = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return void res.end('ok');
  if (req.method === 'GET' && req.url === '/own-time') {
    const body = JSON.stringify({ requests, ms: ownMs });
    requests = 0;
    ownMs = 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(body);
  }
  const arrived = performance.now();
  res.once('finish', () => {
    requests += 1;
    ownMs += performance.now() - arrived;
  });
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', async () => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const body = req.method === 'POST' ? Buffer.concat(parts) : undefined;
    const response = await handler.fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
});
server.keepAliveTimeout = 60_000;

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` })}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
