// The console's side of runs that outlive their request, in headless Chromium: a background run
// followed live on its page (and after a reload mid-run, replayed from its event log), a queued run,
// a cancelled one, a waiting tool call approved or denied, and the chat's background runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startService, testConfig, waitFor, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { launchOrSkip, openPage, shot } from './browser.js';

/** An answer of `words` words, streamed a word every `chunkDelayMs`. */
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
      const answer = slowAnswer(60);
      fake.reply({ text: answer, chunkDelayMs: 150 }, { hang: true });
      // Streamed from the model (`stream: true`), its client gone after the first token: it goes on.
      const slow = await startStreamedAndLeave(service, token, agent.id, 'Count slowly.');
      const waiting = await api('POST', `/agents/${agent.id}/invoke`, { input: 'Then hang.', background: true });
      assert.equal(waiting.status, 'queued');

      // The runs list shows both, the second queued, each with Cancel.
      await other.goto(`${service.url}/#/agents/${agent.id}/runs`);
      await other.locator('tbody tr').nth(1).waitFor();
      assert.deepEqual(await other.locator('tbody tr .badge').allInnerTexts(), ['queued', 'running']);
      assert.equal(await other.locator('tbody tr').getByRole('button', { name: 'Cancel' }).count(), 2);

      // The running one, followed on its page: part of the answer shows before the rest.
      await page.goto(`${service.url}/#/runs/${slow}`);
      await page.waitForFunction(() => {
        const text = document.querySelector('.run-output')?.textContent ?? '';
        return text.includes('word3') && !text.includes('word60.');
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
      assert.ok(!resumed.includes('word60.'), 'the reload came mid-run');
      await shot(page, 'runs-01-live');

      // The queued one, opened meanwhile: queued, then running once the first ends (its model hangs).
      await other.locator('tbody tr', { hasText: 'Then hang.' }).getByRole('link').click();
      await other.getByText('waiting for one of your run slots').waitFor();
      assert.equal(await statusOf(other), 'queued');

      await page.locator('.badge.status-succeeded').waitFor({ timeout: 30_000 });
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

    assert.deepEqual(problems, []);
    assert.deepEqual(otherProblems, []);
    await context.close();
  },
);
