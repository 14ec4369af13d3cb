// What the benchmark's agent-run cases rely on: its fake model answers the `openai` client plainly,
// streamed and held open, and the plain node:http reference writes the same run row as the service
// for the same invoke (the throughput ratio compares equal work).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { absoluteNodeArgs, root, startServiceProcess } from './run-script.js';
import { seedAgents } from '../scripts/bench/seed.js';
import { SECRET_KEY } from '../scripts/bench/options.js';
import { hashPassword } from '../src/auth/password.js';
import { MIN_SCRYPT } from '../src/config.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-bench-runs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a script that writes a `listening` line (the fake model, the plain reference); killed after the file. */
async function startScript(script: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, absoluteNodeArgs(['--import', 'tsx', script]), {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  after(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (part: string) => (stderr += part));
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (part: string) => {
      stdout += part;
      const line = stdout.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}: ${stderr}`)));
  });
}

test('the fake model answers the openai client at once, plainly and streamed, and holds a marked stream open', async () => {
  const url = await startScript('scripts/bench/fake-model.ts', { HOLD_MARKER: 'hold-me' });
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/v1`, maxRetries: 0, timeout: 5000 });
  const plain = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(plain.choices[0].message.content, 'Hello from the fake model.');
  assert.equal(plain.usage?.completion_tokens, 5);

  const stream = await client.chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: unknown;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    usage ??= chunk.usage ?? undefined;
  }
  assert.equal(text, 'Hello from the fake model.');
  assert.deepEqual(usage, { prompt_tokens: 24, completion_tokens: 5, total_tokens: 29 });

  const controller = new AbortController();
  const held = await client.chat.completions.create(
    { model: 'm', messages: [{ role: 'user', content: 'please hold-me' }], stream: true },
    { signal: controller.signal },
  );
  const iterator = held[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).value?.choices[0]?.delta.content, 'Hello');
  const next = iterator.next();
  const still = await Promise.race([next.then(() => 'more'), new Promise((resolve) => setTimeout(() => resolve('held'), 300))]);
  assert.equal(still, 'held');
  controller.abort();
  await next.catch(() => undefined);
});

test('the plain reference writes the same run row as the service for the same invoke', async () => {
  const model = await startScript('scripts/bench/fake-model.ts', {});
  const seeded = seedAgents(
    join(dir, 'runs.db'),
    [{ agents: 2, tokens: 1, tags: 2, prompts: 1, documents: 0, tools: 0 }],
    await hashPassword('bench password', MIN_SCRYPT),
  );
  const plainDb = join(dir, 'runs-plain.db');
  copyFileSync(seeded.path, plainDb);
  const key = SECRET_KEY.toString('hex');
  const modelEnv = { OPENAI_BASE_URL: `${model}/v1` };
  const service = await startServiceProcess({ DATABASE_PATH: seeded.path, SECRET_KEY: key, ...modelEnv });
  after(() => service.stop());
  const plain = await startScript('scripts/baseline-server.ts', { DATABASE_PATH: plainDb, SECRET_KEY: key, ...modelEnv });
  const user = seeded.users[0];
  // Agent 0 has the prompt "Say hello to {who} in {language}." and no memory.
  const body = JSON.stringify({ input: 'What about parental leave?', variables: { who: 'the team', language: 'English' } });
  const answers = [];
  for (const base of [service.url, plain]) {
    const response = await fetch(`${base}/api/v1/agents/${user.agents[0]}/invoke`, {
      method: 'POST',
      headers: { Autorization: `Bearer ${user.tokens[0]}`, 'content-type': 'application/json' },
      body,
    });
    const answer = (await response.json()) as { data: Record<string, unknown> };
    assert.equal(response.status, 200, JSON.stringify(answer));
    answers.push(answer.data);
  }
  const keys = (data: Record<string, unknown>) => Object.keys(data).sort();
  assert.deepEqual(keys(answers[1]), keys(answers[0]));
  assert.equal(answers[1].output, answers[0].output);

  const rows = [seeded.path, plainDb].map((path) => {
    const db = new Database(path, { readonly: true });
    const row = db.prepare('SELECT * FROM agent_runs').all() as Record<string, unknown>[];
    db.close();
    return row;
  });
  assert.equal(rows[0].length, 1);
  assert.equal(rows[1].length, 1);
  const comparable = ({ id, seq, started_at, finished_at, ms, ...rest }: Record<string, unknown>) => rest;
  assert.equal(rows[0][0].status, 'succeeded');
  assert.deepEqual(comparable(rows[1][0]), comparable(rows[0][0]));
});
