// Uploads (--only uploads): documents uploaded as files (multipart/form-data, streamed into the
// database a part at a time). Three targets, on a service of its own:
// - while a 20 MiB file streams in (at about 4 MiB/s, as from a fast client), other requests (GET of
//   an agent, one every 10 ms) keep their p99 within 2× of the same probe's p99 with nothing else going on;
// - a file over UPLOAD_MAX_BYTES is answered 413 before the client has sent it whole;
// - ten 20 MiB uploads at once keep the service's peak RSS under the memory target (150 MB).
import { request, Agent } from 'node:http';
import { join } from 'node:path';
import { fmt, log, OPTS, percentile, round, sleep } from '../options.js';
import { seedAgents } from '../seed.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import { memoryOf, type Proc } from '../processes.js';
import type { CaseReport, Target } from '../report.js';

const MiB = 1024 * 1024;
const FILE_BYTES = 20 * MiB;
const LIMIT_BYTES = 20 * MiB;
const MEMORY_TARGET_MB = 150;

const P99 = 'a 20 MiB upload streaming in keeps other requests’ p99 within 2× of idle';
const EARLY = 'an upload over UPLOAD_MAX_BYTES is answered 413 before it has arrived whole';
const MEMORY = `ten 20 MiB uploads at once keep the service’s peak RSS ≤ ${MEMORY_TARGET_MB} MB`;

export const uploads: OwnCase = {
  name: 'uploads',
  uses: 'own servers',
  targets: [P99, EARLY, MEMORY],
  run,
};

const BOUNDARY = 'bench-upload-boundary';
const HEAD = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
);
const TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
/** Text, so the upload is accepted as TXT. */
const CHUNK = Buffer.alloc(64 * 1024, 'All work and no play makes a dull document.\n');

interface Sent {
  status: number;
  /** File bytes written before the answer arrived. */
  sentBeforeAnswer: number;
  ms: number;
}

/**
 * Sends a multipart upload of `fileBytes` (declared in Content-Length), `bytesPerSecond` at most
 * (0: as fast as the socket takes it); stops sending once an answer arrives.
 */
function sendUpload(proc: Proc, token: string, fileBytes: number, bytesPerSecond = 0): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(`${proc.url}/api/v1/documents`, {
      method: 'POST',
      agent: false,
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
        'Content-Length': String(HEAD.length + fileBytes + TAIL.length),
      },
    });
    let sent = 0;
    let answered = false;
    req.on('response', (response) => {
      answered = true;
      const sentBeforeAnswer = sent;
      response.resume();
      response.on('end', () => {
        req.destroy();
        resolve({ status: response.statusCode ?? 0, sentBeforeAnswer, ms: round(performance.now() - started) });
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.write(HEAD);
    const pump = async () => {
      while (!answered && sent < fileBytes) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, fileBytes - sent));
        sent += piece.length;
        const drained = req.write(piece);
        if (bytesPerSecond > 0) await sleep((piece.length / bytesPerSecond) * 1000);
        else if (!drained) await new Promise((resolve) => req.once('drain', resolve));
      }
      if (!answered) req.end(TAIL);
    };
    void pump();
  });
}

/** GET an agent every `everyMs` for `ms`: the latencies (ms). */
async function probe(proc: Proc, token: string, agentId: string, ms: number, everyMs = 10): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      request(`${proc.url}/api/v1/agents/${agentId}`, { agent, headers: { Authorization: `Bearer ${token}` } }, (response) => {
        response.resume();
        response.on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
    const took = performance.now() - started;
    latencies.push(took);
    if (took < everyMs) await sleep(everyMs - took);
  }
  agent.destroy();
  return latencies.sort((a, b) => a - b);
}

async function run(ctx: BenchContext): Promise<CaseReport> {
  const seeded = seedAgents(
    join(ctx.dir, 'uploads.db'),
    [{ agents: 1, tokens: 1, tags: 0, prompts: 0, documents: 0, tools: 0 }],
    ctx.passwordHash,
  );
  const [user] = seeded.users;
  const token = user.tokens[0];
  const agentId = user.agents[0];
  const probeMs = OPTS.quick ? 3000 : 5000;
  const concurrent = 10;
  // Ingestion off: what is measured is the upload streaming in, not the indexing after it.
  const svc = await ctx.service('service (uploads)', seeded.path, { env: { UPLOAD_MAX_BYTES: String(LIMIT_BYTES) } });

  await probe(svc, token, agentId, 1000); // warm-up
  const idle = await probe(svc, token, agentId, probeMs);
  // 20 MiB at 4 MiB/s: about 5 s of streaming, the probe running meanwhile.
  const uploading = sendUpload(svc, token, FILE_BYTES, 4 * MiB);
  const during = await probe(svc, token, agentId, probeMs);
  const uploaded = await uploading;
  log(
    `uploads: idle p99 ${fmt(percentile(idle, 99), 2)} ms, during a 20 MiB upload ${fmt(percentile(during, 99), 2)} ms (upload ${uploaded.status} in ${fmt(uploaded.ms)} ms)`,
  );

  // Twice the limit, declared up front and sent at 8 MiB/s: the answer should come soon after the limit.
  const over = await sendUpload(svc, token, 2 * LIMIT_BYTES, 8 * MiB);
  log(
    `uploads: over the limit: ${over.status} after ${fmt(over.sentBeforeAnswer / MiB, 1)} MiB of ${fmt((2 * LIMIT_BYTES) / MiB)} MiB sent`,
  );

  const all = await Promise.all(Array.from({ length: concurrent }, () => sendUpload(svc, token, FILE_BYTES)));
  const memory = memoryOf(svc.pid);
  const peakMB = round(((memory?.peakRssMiB ?? NaN) * MiB) / 1e6, 1);
  log(`uploads: ${concurrent} at once: ${all.map((a) => a.status).join(', ')}; peak RSS ${fmt(peakMB, 1)} MB`);
  await ctx.stop(svc);

  const [idleP99, duringP99] = [percentile(idle, 99), percentile(during, 99)];
  const targets: Target[] = [
    {
      target: P99,
      measured:
        `p99 ${fmt(duringP99, 2)} ms while uploading vs ${fmt(idleP99, 2)} ms idle (${fmt(duringP99 / idleP99, 2)}×; ` +
        `${fmt(during.length)} and ${fmt(idle.length)} GETs, one every 10 ms); the upload answered ${uploaded.status} in ${fmt(uploaded.ms)} ms`,
      pass: uploaded.status === 201 && duringP99 <= 2 * idleP99,
    },
    {
      target: EARLY,
      measured: `${over.status} after ${fmt(over.sentBeforeAnswer / MiB, 1)} MiB of a ${fmt((2 * LIMIT_BYTES) / MiB)} MiB file (limit ${fmt(LIMIT_BYTES / MiB)} MiB), ${fmt(over.ms)} ms`,
      pass: over.status === 413 && over.sentBeforeAnswer < 2 * LIMIT_BYTES,
    },
    {
      target: MEMORY,
      measured: `peak RSS ${fmt(peakMB, 1)} MB; answers ${[...new Set(all.map((a) => a.status))].join(', ')}`,
      pass: all.every((a) => a.status === 201) && peakMB <= MEMORY_TARGET_MB,
    },
  ];
  return {
    targets,
    results: {
      uploads: {
        idleP99Ms: round(idleP99, 3),
        duringP99Ms: round(duringP99, 3),
        uploadMs: uploaded.ms,
        overLimit: { status: over.status, sentBeforeAnswerBytes: over.sentBeforeAnswer },
        concurrent: { count: concurrent, statuses: all.map((a) => a.status), peakRssMB: peakMB },
      },
    },
  };
}
