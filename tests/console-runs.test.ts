// The console's side of runs that outlive their request, in headless Chromium: a background run
// followed live on its page (and after a reload mid-run, replayed from its event log; and after its
// event stream drops mid-run, resumed after the last event seen), a queued run, a cancelled one, a
// waiting tool call approved or denied, and the chat's background runs (and their Stop).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { startService, testConfig, waitFor, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { launchOrSkip, openPage, shot } from './browser.js';

/** An answer of `words` words (the fake model streams it a word at a time). */
const slowAnswer = (words: number) => Array.from({ length: words }, (_, index) => `word${index + 1}`).join(' ') + '.';

/** Signs `page`'s tab in with a token made through the API. */
async function signedIn(service: TestService) {
  const { email, password } = await service.signUp('Rita Runs');
  const { token, apiToken } = (await service.request('POST', '/api/v1/auth/sign-in', { body: { email, password } })).body.data;
  return { token, tokenId: apiToken.id as string };
}

/**
 * Starts a background run with its event stream (`stream: true`, so the model streams its tokens),
 * reads it up to the first token and goes away; answers the run's id.
 */
async function startStreamedAndLeave(service: TestService, token: string, agentId: string, input: string): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(`${service.url}/api/v1/agents/${agentId}/invoke`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ input, background: true, stream: true }),
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  let text = '';
  while (!/event: token/.test(text)) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the stream ended before a token: ${text}`);
    text += new TextDecoder().decode(value);
  }
  controller.abort();
  const runId = /"runId":"([^"]+)"/.exec(text)?.[1];
  assert.ok(runId, text);
  return runId;
}

/** One event of a `text/event-stream` text, complete (its blank line seen). */
interface WireEvent {
  id: number;
  event: string;
  data: string;
}

/** The complete events of a stream's text (a part cut off at the end is left out). */
function completeEvents(text: string): WireEvent[] {
  const blocks = text.split('\n\n');
  blocks.pop(); // after the last blank line: nothing, or an event cut off
  return blocks
    .map((block) =>
      Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])),
    )
    .filter((fields) => fields.data !== undefined)
    .map((fields) => ({ id: Number(fields.id), event: fields.event, data: fields.data }));
}

/**
 * A proxy in front of the service for the page: everything passes through, except that the first
 * event stream of a run is cut off — its connection destroyed — after `tokens` token events and
 * the first bytes of the event after them (when they have come), as a network change would drop it
 * mid-run. Records
 * each event stream's path and what the page was sent of it.
 */
async function startCuttingProxy(target: string, tokens: number) {
  const streams: { path: string; sent: string }[] = [];
  const server = http.createServer((req, res) => {
    const upstream = http.request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      if (!/\/runs\/[^/]+\/events/.test(req.url!)) return void answer.pipe(res);
      res.flushHeaders();
      const stream = { path: req.url!, sent: '' };
      streams.push(stream);
      const cutting = streams.length === 1;
      let cut = false;
      answer.setEncoding('utf8');
      answer.on('data', (text: string) => {
        if (cut || res.destroyed) return;
        if (cutting) {
          const seen = stream.sent + text;
          const tokenEnds = [...seen.matchAll(/event: token\n(?:[^\n]+\n)*\n/g)];
          if (tokenEnds.length >= tokens) {
            const last = tokenEnds[tokens - 1];
            const end = Math.min(seen.length, last.index + last[0].length + 12);
            const part = seen.slice(stream.sent.length, end);
            stream.sent += part;
            cut = true;
            // Closed a moment after what it was sent, which the page has read by then: Chromium
            // drops what a stream has not yet handed on when its connection fails.
            res.write(part);
            setTimeout(() => {
              res.destroy();
              upstream.destroy();
            }, 500);
            return;
          }
        }
        stream.sent += text;
        res.write(text);
      });
      answer.on('end', () => cut || res.end());
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const outputOf = (page: Page) => page.locator('.run-output').innerText();
const statusOf = (page: Page) => page.locator('dl.facts .badge').innerText();

test(
  'runs in Chromium: a background run followed live and after a reload, a queued run, cancel, approval, the chat in the background',
  { timeout: 240_000 },
  async (t) => {
    const browser = await launchOrSkip(t);
    if (!browser) return;
    t.after(() => browser.close());
    const fake = await startFakeOpenAI();
    // One run at a time: a second background run waits queued.
    const service = await startService({ runs: { ...testConfig().runs, concurrencyPerUser: 1 } });
    const { token, tokenId } = await signedIn(service);
    const api = async (method: string, path: string, body?: unknown) => {
      const reply = await service.request(method, `/api/v1${path}`, { token, body });
      assert.ok(reply.status < 300, `${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body.data;
    };
    const agent = await api('POST', '/agents', {
      name: 'Slow bot',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url },
    });

    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.addInitScript(
      ([value, id]) => {
        sessionStorage.setItem('agent-console.token', value!);
        sessionStorage.setItem('agent-console.tokenId', id!);
      },
      [token, tokenId],
    );
    const { page, problems } = await openPage(context, service);
    const { page: other, problems: otherProblems } = await openPage(context, service);

    await t.test('a background run followed live, through a reload; a queued run; cancel', async () => {
      const answer = slowAnswer(200);
      fake.reply({ text: answer, chunkDelayMs: 100 }, { hang: true });
      // Streamed from the model (`stream: true`), its client gone after the first token: it goes on.
      const slow = await startStreamedAndLeave(service, token, agent.id, 'Count slowly.');
      const waiting = await api('POST', `/agents/${agent.id}/invoke`, { input: 'Then hang.', background: true });
      assert.equal(waiting.status, 'queued');

      // The runs list shows both, the second queued, each with Cancel.
      await other.goto(`${service.url}/#/agents/${agent.id}/runs`);
      await other.locator('tbody tr').nth(1).waitFor();
      assert.deepEqual(await other.locator('tbody tr .badge').allInnerTexts(), ['queued', 'running']);
      assert.equal(await other.locator('tbody tr').getByRole('button', { name: 'Cancel' }).count(), 2);

      // The queued one, opened beside: queued, then running once the first ends (its model hangs).
      await other.locator('tbody tr', { hasText: 'Then hang.' }).getByRole('link').click();
      await other.getByText('waiting for one of your run slots').waitFor();
      assert.equal(await statusOf(other), 'queued');

      // The running one, followed on its page: part of the answer shows before the rest.
      await page.goto(`${service.url}/#/runs/${slow}`);
      await page.waitForFunction(() => {
        const text = document.querySelector('.run-output')?.textContent ?? '';
        return text.includes('word3') && !text.includes('word200.');
      });
      assert.equal(await statusOf(page), 'running');
      assert.ok(await page.getByRole('button', { name: 'Cancel run' }).isVisible());
      const before = await outputOf(page);
      assert.ok(answer.startsWith(before), before);

      // Reloaded mid-run: the log is replayed and the answer goes on from where it was.
      await page.reload();
      await page.waitForFunction((seen) => (document.querySelector('.run-output')?.textContent ?? '').startsWith(seen), before);
      const resumed = await outputOf(page);
      assert.equal(await statusOf(page), 'running', `still under way after the reload: ${resumed}`);
      assert.ok(!resumed.includes('word200.'), 'the reload came mid-run');
      await shot(page, 'runs-01-live');

      await page.locator('.badge.status-succeeded').waitFor({ timeout: 60_000 });
      const record = await api('GET', `/runs/${slow}`);
      assert.equal(record.output, answer);
      assert.equal(await outputOf(page), answer);
      assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0, 'an ended run has no Cancel');

      await other.locator('dl.facts .badge.status-running').waitFor({ timeout: 15_000 });
      await fake.waitForRequests(2);
      await other.getByRole('button', { name: 'Cancel run' }).click();
      await other.locator('dl.facts .badge.status-cancelled').waitFor();
      await other.locator('.notice.error', { hasText: 'cancelled' }).waitFor();
      await fake.waitForAbort(fake.requests[1]);
      assert.equal((await api('GET', `/runs/${waiting.runId}`)).status, 'cancelled');
      await shot(other, 'runs-02-cancelled');
    });

    await t.test('a queued run cancelled from the list', async () => {
      fake.reply({ hang: true });
      const hanging = await api('POST', `/agents/${agent.id}/invoke`, { input: 'Hang first.', background: true });
      const queued = await api('POST', `/agents/${agent.id}/invoke`, { input: 'Wait behind it.', background: true });
      assert.equal(queued.status, 'queued');
      await other.goto(`${service.url}/#/agents/${agent.id}/runs`);
      const row = other.locator('tbody tr', { hasText: 'Wait behind it.' });
      await row.getByRole('button', { name: 'Cancel' }).click();
      await row.locator('.badge.status-cancelled').waitFor();
      assert.equal(await row.getByRole('button', { name: 'Cancel' }).count(), 0);
      assert.equal((await api('GET', `/runs/${queued.runId}`)).status, 'cancelled');
      await api('POST', `/runs/${hanging.runId}/cancel`);
    });

    await t.test('the chat starts a run in the background and comes back to it after a reload', async () => {
      const answer = slowAnswer(150);
      fake.reply({ text: answer, chunkDelayMs: 100 });
      await page.goto(`${service.url}/#/agents/${agent.id}/chat`);
      await page.getByLabel('Run in background', { exact: true }).check();
      await page.getByLabel('Message', { exact: true }).fill('Count in the background.');
      await page.getByLabel('Message', { exact: true }).press('Enter');
      await page.waitForFunction(() => {
        const text = document.querySelector('.turn:last-of-type .answer')?.textContent ?? '';
        return text.includes('word3') && !text.includes('word150.');
      });
      const link = page.locator('.turn').last().getByRole('link', { name: 'Follow the run' });
      const runId = (await link.getAttribute('href'))!.split('/').at(-1)!;
      const before = await page.locator('.turn:last-of-type .answer').innerText();
      await shot(page, 'runs-03-chat-background');

      // Reloaded mid-run: the chat comes back to the run, its answer replayed from the log, and goes on.
      await page.reload();
      const turn = page.locator('.turn', { hasText: 'Count in the background.' });
      await turn.locator('.answer').waitFor();
      await page.waitForFunction((seen) => (document.querySelector('.turn .answer')?.textContent ?? '').startsWith(seen), before);
      assert.equal(await turn.getAttribute('data-state'), 'streaming', 'came back mid-run');
      await page.locator('.turn[data-state="done"]').waitFor({ timeout: 60_000 });
      const record = await api('GET', `/runs/${runId}`);
      assert.equal(record.status, 'succeeded');
      assert.equal(record.background, true);
      assert.equal(record.output, answer);
      assert.equal(await turn.locator('.answer').innerText(), answer);
      await turn.getByRole('link', { name: 'See the run' }).click();
      await page.locator('dl.facts .badge.status-succeeded').waitFor();

      // Seen to end, the run is not come back to again.
      await page.goto(`${service.url}/#/agents/${agent.id}/chat`);
      await page.getByText('Ask Slow bot something to start.').waitFor();
      assert.equal(await page.locator('.turn').count(), 0);
    });

    await t.test('a tool call waiting for approval: its arguments, Deny with a reason, the run goes on', async () => {
      const tool = await api('POST', '/tools', { name: 'Web search', type: 'SEARCH', metadata: { url: 'http://127.0.0.1:9' } });
      const careful = await api('POST', '/agents', {
        name: 'Careful bot',
        type: 'VENDOR_A',
        llm: { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url },
      });
      await api('POST', '/agent-tools', { agentId: careful.id, toolId: tool.id, requiresApproval: true });
      fake.reply({ toolCalls: [{ name: 'web_search', arguments: '{"query":"otter dens"}' }] }, { text: 'Then I will not search.' });
      const started = await api('POST', `/agents/${careful.id}/invoke`, { input: 'Find otter dens.', background: true });
      await waitFor('the run waits', async () =>
        (await api('GET', `/runs/${started.runId}`)).status === 'requires_action' ? true : undefined,
      );

      await page.goto(`${service.url}/#/runs/${started.runId}`);
      const call = page.locator('.waiting-call');
      await call.waitFor();
      assert.equal(await statusOf(page), 'requires_action');
      assert.match(await call.locator('legend').innerText(), /Web search\s+calls\s+web_search/);
      assert.deepEqual(JSON.parse(await call.locator('pre.json').innerText()), { query: 'otter dens' });
      assert.ok(await page.getByRole('button', { name: 'Cancel run' }).isVisible());
      assert.ok(await page.getByRole('button', { name: 'Send the answer' }).isDisabled(), 'nothing is sent before a choice');
      await call.getByLabel('Deny').check();
      await call.getByLabel('Reason (told to the model)').fill('Not on my budget.');
      await shot(page, 'runs-04-approval');
      await page.getByRole('button', { name: 'Send the answer' }).click();
      await page.locator('dl.facts .badge.status-succeeded').waitFor({ timeout: 15_000 });
      assert.equal(await outputOf(page), 'Then I will not search.');
      const told = JSON.stringify(fake.requests.at(-1)!.body.messages.at(-1));
      assert.match(told, /denied/);
      assert.match(told, /Not on my budget\./);
    });

    await t.test("the chat's Stop on a background run cancels the run, and the turn says so", async () => {
      fake.reply({ text: slowAnswer(150), chunkDelayMs: 100 });
      await page.goto(`${service.url}/#/agents/${agent.id}/chat`);
      await page.getByLabel('Run in background', { exact: true }).check();
      await page.getByLabel('Message', { exact: true }).fill('Count, then be stopped.');
      await page.getByLabel('Message', { exact: true }).press('Enter');
      await page.waitForFunction(() => (document.querySelector('.turn:last-of-type .answer')?.textContent ?? '').includes('word3'));
      const turn = page.locator('.turn', { hasText: 'Count, then be stopped.' });
      const runId = (await turn.getByRole('link', { name: 'Follow the run' }).getAttribute('href'))!.split('/').at(-1)!;
      const modelRequest = fake.requests.at(-1)!;

      const cancelling = page.waitForRequest(
        (request) => request.method() === 'POST' && request.url().endsWith(`/api/v1/runs/${runId}/cancel`),
      );
      // Clicked as an event: the composer moves with the growing answer, never still for Playwright's click.
      await page.getByRole('button', { name: 'Stop', exact: true }).dispatchEvent('click');
      const cancelRequest = await cancelling;
      assert.equal((await cancelRequest.response())?.status(), 200);
      await page.locator('.turn[data-state="stopped"]').waitFor();
      assert.equal(await turn.locator('.notice.error').innerText(), 'Stopped: the run was cancelled.');
      assert.equal(await page.getByRole('button', { name: 'Stop', exact: true }).count(), 0);
      const shown = await turn.locator('.answer').innerText();
      assert.ok(slowAnswer(150).startsWith(shown) && !shown.includes('word150.'), `part of the answer stays: ${shown}`);
      await fake.waitForAbort(modelRequest);
      const record = await api('GET', `/runs/${runId}`);
      assert.equal(record.status, 'cancelled');
      await shot(page, 'runs-05-chat-stopped');
    });

    await t.test('the run page resumes a dropped event stream after the last event it saw: the whole answer, no token twice', async () => {
      const answer = slowAnswer(80);
      fake.reply({ text: answer, chunkDelayMs: 100 });
      const runId = await startStreamedAndLeave(service, token, agent.id, 'Count through a drop.');
      const proxy = await startCuttingProxy(service.url, 5);
      t.after(() => proxy.close());
      const { page: viaProxy, problems: proxyProblems } = await openPage(context, { ...service, url: proxy.url });

      await viaProxy.goto(`${proxy.url}/#/runs/${runId}`);
      // Every text the answer shows while it grows, from its first token on.
      await viaProxy.waitForFunction(() => (document.querySelector('.run-output')?.textContent ?? '').startsWith('word1'));
      await viaProxy.evaluate(() => {
        const output = document.querySelector('.run-output')!;
        const seen = [output.textContent ?? ''];
        (window as unknown as { outputs: string[] }).outputs = seen;
        new MutationObserver(() => {
          if (output.textContent !== seen.at(-1)) seen.push(output.textContent ?? '');
        }).observe(output, { childList: true, subtree: true, characterData: true });
      });
      await waitFor('the page to follow the run again', async () => (proxy.streams.length >= 2 ? true : undefined));
      assert.equal(await statusOf(viaProxy), 'running', 'the stream dropped mid-run');
      await viaProxy.locator('dl.facts .badge.status-succeeded').waitFor({ timeout: 60_000 });

      // Asked again after the last event it had whole: the one cut off in the middle is not counted.
      const [first, second] = proxy.streams;
      const had = completeEvents(first.sent);
      assert.equal(had.filter((event) => event.event === 'token').length, 5);
      const lastSeen = had.at(-1)!.id;
      assert.deepEqual(
        proxy.streams.map((stream) => stream.path),
        [`/api/v1/runs/${runId}/events?after=0`, `/api/v1/runs/${runId}/events?after=${lastSeen}`],
      );
      const rest = completeEvents(second.sent);
      assert.deepEqual(
        [...had, ...rest].map((event) => event.id),
        [...had, ...rest].map((_, index) => index + 1),
        'every event once, in order',
      );
      const tokens = [...had, ...rest].filter((event) => event.event === 'token').map((event) => JSON.parse(event.data).text);
      assert.equal(tokens.join(''), answer);

      const outputs = await viaProxy.evaluate(() => (window as unknown as { outputs: string[] }).outputs);
      for (const output of outputs) assert.ok(answer.startsWith(output), `the answer never showed a token twice: ${output}`);
      assert.equal(outputs.at(-1), answer);
      assert.equal((await api('GET', `/runs/${runId}`)).output, answer);
      // The dropped connection is the only thing Chromium complained of.
      assert.deepEqual(
        proxyProblems.filter((problem) => !/ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE/.test(problem)),
        [],
      );
      await viaProxy.close();
    });

    assert.deepEqual(problems, []);
    assert.deepEqual(otherProblems, []);
    await context.close();
  },
);
