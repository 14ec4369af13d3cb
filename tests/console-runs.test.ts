// The console's side of runs that outlive their request, in headless Chromium: a background run
// followed live on its page (and after a reload mid-run, replayed from its event log), a queued run,
// a cancelled one, a waiting tool call approved or denied, and the chat's background runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
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

    assert.deepEqual(problems, []);
    assert.deepEqual(otherProblems, []);
    await context.close();
  },
);
