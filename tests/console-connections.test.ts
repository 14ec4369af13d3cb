// The console's Connections page and the agent form's connection and model pickers in headless
// Chromium: the built-in connections listed read-only, create a connection (its key never shown),
// test it, edit it, give an agent that connection and a model its server lists, and a delete
// refused while the agent uses it. Skips, saying why, without Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { launchOrSkip, openPage, shot } from './browser.js';
import { startService, type Json } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const KEY = 'sk-console-connection-7777';
const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

test(
  'Connections in the console: list, create, test, edit, pick for an agent with its model, delete refused while used',
  { timeout: 120_000 },
  async (t) => {
    const browser = await launchOrSkip(t);
    if (!browser) return;
    t.after(() => browser.close());

    const fake = await startFakeOpenAI();
    fake.setModels(['llama3', 'qwen2.5']);
    fake.requireKey(KEY);
    const service = await startService();
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const { page, problems } = await openPage(context, service);

    await page.goto(`${service.url}/`);
    await page.getByRole('tab', { name: 'Create an account' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Connie');
    await page.getByLabel('Email', { exact: true }).fill(`connie.${Date.now()}@example.com`);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByLabel('Password', { exact: true }).press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    const token = (await page.evaluate(() => sessionStorage.getItem('agent-console.token')))!;

    await nav(page, 'Connections').click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
    for (const id of ['builtin-openai', 'builtin-ollama']) {
      const row = page.locator(`tr[data-connection-id="${id}"]`);
      await row.waitFor();
      assert.match(await row.innerText(), /Built in/);
      assert.equal(await row.getByRole('button', { name: /^Edit/ }).count(), 0, 'a built-in connection cannot be edited');
      assert.equal(await row.getByRole('button', { name: 'Delete' }).count(), 0, 'nor deleted');
    }

    // A refused form, cancelled and opened again, starts without the errors of the refusal.
    await page.getByRole('button', { name: 'New connection' }).click();
    const form = page.getByRole('form', { name: 'New connection' });
    await form.getByRole('button', { name: 'Create connection' }).click();
    await form.locator('[data-field="name"] .field-error').waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'New connection' }).click();
    await form.getByLabel('Name', { exact: true }).waitFor();
    assert.equal(await form.locator('.field-error, .notice.error').count(), 0, 'no errors left from the refused form');

    // Create one; the key is write-only.
    await form.getByLabel('Name', { exact: true }).fill('GPU box');
    await form.getByLabel('Provider', { exact: true }).selectOption('ollama');
    await form.getByLabel('Base URL', { exact: true }).fill(fake.url);
    await form.getByLabel('API key', { exact: true }).fill(KEY);
    await form.getByRole('button', { name: 'Create connection' }).click();
    const row = page.locator('tr[data-connection-id]').filter({ hasText: 'GPU box' });
    await row.waitFor();
    assert.match(await row.innerText(), /key stored/);
    assert.ok(!(await page.content()).includes(KEY), 'the key is not on the page');

    // Test it: the answer in words.
    await row.getByRole('button', { name: /^Test/ }).click();
    await row.getByText('Connected: the server lists 2 models.').waitFor();
    // A built-in one whose server is down says so.
    const ollama = page.locator('tr[data-connection-id="builtin-ollama"]');
    await ollama.getByRole('button', { name: /^Test/ }).click();
    await ollama.getByText(/is unreachable/).waitFor();
    await shot(page, 'connections');

    // Edit: a new name.
    await row.getByRole('button', { name: /^Edit/ }).click();
    const edit = page.getByRole('form', { name: 'Edit GPU box' });
    await edit.getByLabel('Name', { exact: true }).fill('GPU box 2');
    await edit.getByRole('button', { name: 'Save' }).click();
    const renamed = page.locator('tr[data-connection-id]').filter({ hasText: 'GPU box 2' });
    await renamed.waitFor();
    const connectionId = await renamed.getAttribute('data-connection-id');

    // An agent on it: the model picked from the server's list, no provider, base URL or key fields.
    await page.goto(`${service.url}/#/agents/new`);
    await page.getByRole('heading', { level: 1, name: 'New agent' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Local helper');
    await page.getByLabel('Connection', { exact: true }).selectOption(connectionId!);
    const model = page.getByLabel('Model', { exact: true });
    await model.locator('option', { hasText: 'qwen2.5' }).waitFor({ state: 'attached' });
    assert.deepEqual(await model.locator('option').allInnerTexts(), ['Choose a model', 'llama3', 'qwen2.5']);
    assert.equal(await page.getByLabel('Base URL', { exact: true }).count(), 0);
    assert.equal(await page.getByLabel('API key', { exact: true }).count(), 0);
    await model.selectOption('qwen2.5');
    await shot(page, 'agent-connection');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Local helper' }).waitFor();
    const agents = await service.request('GET', '/api/v1/agents', { token });
    assert.deepEqual(
      agents.body.data.map((agent: Json) => agent.llm),
      [{ model: 'qwen2.5', provider: 'ollama', baseUrl: null, hasApiKey: false, connectionId }],
    );

    // Deleting the connection is refused while the agent uses it, saying so.
    await nav(page, 'Connections').click();
    const used = page.locator(`tr[data-connection-id="${connectionId}"]`);
    await used.getByRole('button', { name: 'Delete' }).click();
    await used.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText(/1 agent uses this connection/).waitFor();

    const unexpected = problems.filter((problem) => !/status of 409/.test(problem));
    assert.deepEqual(unexpected, []);
    assert.deepEqual(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations), []);
  },
);
