// MCP both ways (--only mcp), one request at a time on one kept-alive connection, the two sides of
// each comparison alternating request by request (so a slow second of the machine falls on both):
// - /mcp: a `tools/call` of an agent's tool (the 2026-07-28 stateless request, as the official
//   client sends it) against a plain POST /agents/{id}/invoke of the same agent; the fake model
//   answers at once.
// - the MCP tool kind: a run whose model calls an MCP tool once (scripts/bench/mcp-server.ts, the
//   official SDK's server, timing itself) against the same run shape with no tool (the model's
//   call answered at once with "no such function"): the difference, less the MCP server's own time
//   in that run (list, call), is what the service spends on MCP per call.
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { OPTS, fmt, log, median, percentile, round } from '../options.js';
import { seedAgents } from '../seed.js';
import { startHelper, type Proc } from '../processes.js';
import { jsonHeaders, probe } from '../load.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';

const SERVER = "/mcp tools/call on an agent's tool: within 2 ms (p50) of the same agent's plain /invoke";
const CLIENT = "a run calling an MCP tool: at most 3 ms (p50) beyond the MCP server's own time per call";
/** In a run's input, asks the fake model to call the MCP tool's function first. */
const CALL_MARKER = 'bench-call-the-tool';
const MCP_VERSION = '2026-07-28';

export const mcp: OwnCase = {
  name: 'mcp',
  uses: 'own servers',
  targets: [SERVER, CLIENT],
  run,
};

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends one request on `agent` (one socket) and answers its status, body and time in ms. */
function timed(proc: Proc, agent: Agent, sent: Sent): Promise<{ status: number; text: string; ms: number }> {
  const url = new URL(proc.url);
  const body = Buffer.from(sent.body);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: sent.method,
        path: sent.path,
        headers: { ...sent.headers, 'content-length': String(body.length) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (part: string) => (text += part));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, ms: performance.now() - started }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `a` and `b` alternately (a b, b a, …) `samples` times each; their times in ms, in order. */
async function alternate(samples: number, a: () => Promise<number>, b: () => Promise<number>): Promise<{ a: number[]; b: number[] }> {
  const times = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < samples; i++) {
    if (i % 2 === 0) {
      times.a.push(await a());
      times.b.push(await b());
    } else {
      times.b.push(await b());
      times.a.push(await a());
    }
  }
  return times;
}

const p50 = (values: number[]) => percentile(Float64Array.from(values).sort(), 50);

/**
 * Milliseconds the process's main thread (where its JavaScript runs) has been on a core so far
 * (/proc/<pid>/schedstat): unlike the wall time, it does not grow when the machine is busy.
 */
const onCpuMs = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

async function run(ctx: BenchContext): Promise<CaseReport> {
  // One user with seven agents (no prompts, documents or tools): agent 0 answers /invoke and /mcp,
  // and is the no-tool side of the run comparison; agent 6 (the same type, without memory) gets the MCP tool.
  const seeded = seedAgents(
    join(ctx.dir, 'mcp.db'),
    [{ agents: 7, tokens: 1, tags: 0, prompts: 0, documents: 0, tools: 0 }],
    ctx.passwordHash,
  );
  const [user] = seeded.users;
  const token = user.tokens[0];
  const [plainAgent, , , , , , mcpAgent] = user.agents;
  const fake = await startHelper('fake model', 'scripts/bench/fake-model.ts', {
    TOOL_CALL_MARKER: CALL_MARKER,
    TOOL_CALL_NAME: 'calc__add',
  });
  const mcpServer = await startHelper('MCP server', 'scripts/bench/mcp-server.ts', {});
  const svc = await ctx.service('service (mcp)', seeded.path, {
    nodeArgs: ctx.profileArgs,
    env: { OPENAI_BASE_URL: `${fake.url}/v1`, ALLOW_PRIVATE_NETWORKS: 'on', RUN_CONCURRENCY_PER_USER: '1000' },
  });
  const headers = jsonHeaders(token);
  const post = (path: string, body: object): Sent => ({ method: 'POST', path, headers, body: JSON.stringify(body) });
  const tool = await fetch(`${svc.url}/api/v1/tools`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Calc', type: 'MCP', metadata: { url: `${mcpServer.url}/mcp` } }),
  }).then((response) => response.json() as Promise<{ data: { id: string } }>);
  await probe(svc, post('/api/v1/agent-tools', { agentId: mcpAgent, toolId: tool.data.id }), 201);

  const input = 'What does the leave policy say about parental leave?';
  const invoke = post(`/api/v1/agents/${plainAgent}/invoke`, { input });
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MCP_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  let rpcId = 0;
  const toolsCall = (): Sent => ({
    method: 'POST',
    path: '/mcp',
    headers: {
      ...headers,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'agent_0',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++rpcId,
      method: 'tools/call',
      params: { name: 'agent_0', arguments: { input }, _meta: meta },
    }),
  });
  const withTool = post(`/api/v1/agents/${mcpAgent}/invoke`, { input: `${input} ${CALL_MARKER}` });
  const withoutTool = post(`/api/v1/agents/${plainAgent}/invoke`, { input: `${input} ${CALL_MARKER}` });

  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const check = (what: string, answer: { status: number; text: string }, ok: (text: string) => boolean) => {
    if (answer.status !== 200 || !ok(answer.text)) throw new Error(`${what} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  };
  const ownTime = async () => (await fetch(`${mcpServer.url}/own-time`).then((r) => r.json())) as { requests: number; ms: number };

  // Each call checked once: the /mcp answer is the run's, the MCP run made its call and the plain one did not.
  check(
    '/mcp tools/call',
    await timed(svc, agent, toolsCall()),
    (text) => text.includes('Hello from the fake model.') && !text.includes('"isError":true'),
  );
  check('the run with the MCP tool', await timed(svc, agent, withTool), (text) => text.includes('The sum is 5.'));
  check('the run without it', await timed(svc, agent, withoutTool), (text) => text.includes('There is no function named'));

  const samples = OPTS.quick ? 200 : 2000;
  const warmup = OPTS.quick ? 20 : 200;
  const targets: Target[] = [];
  const notes: string[] = [];

  // /mcp against /invoke. Each request's time, and the service's CPU time meanwhile (`cpu`, when given).
  const request = async (sent: Sent, cpu?: { service: number[]; mcp: number[] }) => {
    const before = cpu && [onCpuMs(svc.pid), onCpuMs(mcpServer.pid)];
    const { ms } = await timed(svc, agent, sent);
    if (cpu && before) {
      cpu.service.push(onCpuMs(svc.pid) - before[0]);
      cpu.mcp.push(onCpuMs(mcpServer.pid) - before[1]);
    }
    return ms;
  };
  const cpuOf = () => ({ service: [] as number[], mcp: [] as number[] });
  const cpu = { mcp: cpuOf(), invoke: cpuOf(), withTool: cpuOf(), withoutTool: cpuOf() };
  await alternate(
    warmup,
    () => request(toolsCall()),
    () => request(invoke),
  );
  log(`mcp: /mcp tools/call vs /invoke, ${samples} each, alternating`);
  const served = await alternate(
    samples,
    () => request(toolsCall(), cpu.mcp),
    () => request(invoke, cpu.invoke),
  );
  const [mcpP50, invokeP50] = [p50(served.a), p50(served.b)];
  const serverDifference = round(mcpP50 - invokeP50, 2);
  targets.push({
    target: SERVER,
    measured:
      `${fmt(serverDifference, 2)} ms: p50 ${fmt(mcpP50, 2)} vs ${fmt(invokeP50, 2)} ms (${fmt(samples)} each, alternating); ` +
      `the service's CPU a request ${fmt(mean(cpu.mcp.service), 2)} vs ${fmt(mean(cpu.invoke.service), 2)} ms`,
    pass: serverDifference <= 2,
  });

  // A run with one MCP call against the same run without the tool; the server's own time per run taken out.
  const own: number[] = [];
  let requestsPerRun = 0;
  let measuring = false;
  const mcpRun = async () => {
    await ownTime(); // starts the server's sum at 0, outside the timed request
    const ms = await request(withTool, measuring ? cpu.withTool : undefined);
    const spent = await ownTime();
    own.push(spent.ms);
    requestsPerRun = spent.requests;
    return ms;
  };
  await alternate(warmup, mcpRun, () => request(withoutTool));
  own.length = 0;
  measuring = true;
  log(`mcp: runs with one MCP call vs without, ${samples} each, alternating`);
  const runs = await alternate(samples, mcpRun, () => request(withoutTool, cpu.withoutTool));
  const overheads = runs.a.map((ms, i) => ms - runs.b[i] - own[i]);
  const [withP50, withoutP50, ownP50] = [p50(runs.a), p50(runs.b), p50(own)];
  const overhead = round(median(overheads), 2);
  targets.push({
    target: CLIENT,
    measured:
      `${fmt(overhead, 2)} ms (median of paired runs): p50 ${fmt(withP50, 2)} ms with the call vs ${fmt(withoutP50, 2)} ms without, ` +
      `the MCP server's own time p50 ${fmt(ownP50, 2)} ms over ${requestsPerRun} requests a run; ` +
      `the service's CPU a run ${fmt(mean(cpu.withTool.service), 2)} vs ${fmt(mean(cpu.withoutTool.service), 2)} ms, ` +
      `the MCP server's ${fmt(mean(cpu.withTool.mcp), 2)} ms`,
    pass: overhead <= 3,
  });
  notes.push(
    `MCP: a run with an MCP tool lists the server's tools and calls one (${requestsPerRun} requests to the server, on a ` +
      "connection kept from the run before); the figure is all of that beyond the server's own time.",
  );

  agent.destroy();
  await ctx.stop(svc);
  await ctx.stop(mcpServer);
  await ctx.stop(fake);
  if (OPTS.cpuProf) ctx.summariseProfileOf(svc);
  return {
    targets,
    notes,
    results: {
      mcp: {
        server: {
          samples,
          mcpP50Ms: round(mcpP50, 3),
          invokeP50Ms: round(invokeP50, 3),
          differenceP50Ms: serverDifference,
          serviceCpuMsPerRequest: { mcp: round(mean(cpu.mcp.service), 3), invoke: round(mean(cpu.invoke.service), 3) },
        },
        client: {
          samples,
          withCallP50Ms: round(withP50, 3),
          withoutP50Ms: round(withoutP50, 3),
          serverOwnP50Ms: round(ownP50, 3),
          serverRequestsPerRun: requestsPerRun,
          overheadMedianMs: overhead,
          cpuMsPerRun: {
            serviceWithCall: round(mean(cpu.withTool.service), 3),
            serviceWithout: round(mean(cpu.withoutTool.service), 3),
            mcpServer: round(mean(cpu.withTool.mcp), 3),
          },
        },
      },
    },
  };
}
