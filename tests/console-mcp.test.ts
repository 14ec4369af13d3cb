// The console's form for an MCP tool, in headless Chromium against an MCP server built with the
// official SDK (tests/fixtures/mcp-servers.ts): the server's URL and headers (write-only: the form
// says only whether they are set), and the allow-list picked from what the server offers. Skips,
// saying why, when Chromium cannot start. Saves a screenshot under test-output/console/.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startService, type Json } from './helpers.js';
import { startMcpServer2 } from './fixtures/mcp-servers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = join(import.meta.dirname, '..', 'test-output', 'console');
const SECRET = 'Bearer sk-console-mcp-secret-4242';

async function launchOrSkip(t: TestContext): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium is not installed at ${CHROMIUM}`);
    return undefined;
  }
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'], timeout: 30_000 });
  } catch (error) {
    t.skip(`Chromium at ${CHROMIUM} could not start: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

const field = (page: Page, name: string) => page.locator(`[data-field="${name}"]`);

test('the MCP tool form in Chromium: URL, write-only headers, the allow-list picked from the server', { timeout: 180_000 }, async (t) => {
  const browser = await launchOrSkip(t);
  if (!browser) return;
  t.after(() => browser.close());
  const service = await startService();
  const server = await startMcpServer2();
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`${service.url}/`);
  await page.getByRole('tab', { name: 'Create an account' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Mia Mcp');
  await page.getByLabel('Email', { exact: true }).fill(`mia.${Date.now()}@example.com`);
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByLabel('Password', { exact: true }).press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
  const token = (await page.evaluate(() => sessionStorage.getItem('agent-console.token')))!;
  const api = (path: string) => service.request('GET', `/api/v1${path}`, { token });

  // A new MCP tool: its own fields instead of the settings JSON; the allow-list waits for a saved tool.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tools', exact: true }).click();
  await page.getByRole('button', { name: 'New tool' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Calc');
  await page.getByLabel('Type', { exact: true }).selectOption('MCP');
  assert.equal(await page.getByLabel('Settings (JSON)', { exact: true }).count(), 0, 'no settings JSON for MCP');
  await field(page, 'metadata.tools').getByText('Save this tool, then edit it').waitFor();
  await page.getByRole('button', { name: 'Create tool' }).click();
  await field(page, 'metadata.url').getByText("the server's URL is needed").waitFor();
  await page.getByLabel('Server URL', { exact: true }).fill(server.url);
  await page.getByLabel('Headers', { exact: true }).fill(`Authorization: ${SECRET}`);
  await page.getByRole('button', { name: 'Create tool' }).click();
  const card = page.locator('.cards li', { hasText: 'Calc' });
  await card.getByText('MCP · headers set').waitFor();

  const [tool] = (await api('/tools')).body.data as Json[];
  assert.equal(tool.hasHeaders, true);
  assert.deepEqual(await functionNames(), ['calc__add', 'calc__echo_headers', 'calc__fail', 'calc__slow']);
  async function functionNames() {
    return ((await api(`/tools/${tool.id}/functions`)).body.data.functions as Json[]).map((fn) => fn.name);
  }

  // Editing: the headers are "set", never shown; the picker lists the server's tools, all ticked.
  await card.getByRole('button', { name: 'Edit Calc' }).click();
  const form = page.getByRole('form', { name: 'Edit Calc' });
  assert.equal(await field(page, 'headers-state').textContent(), 'set');
  assert.equal(await page.getByLabel('Headers', { exact: true }).inputValue(), '');
  assert.equal(await page.getByLabel('Server URL', { exact: true }).inputValue(), '');
  for (const name of ['add', 'echo_headers', 'fail', 'slow'])
    assert.equal(await page.getByLabel(name, { exact: true }).isChecked(), true, name);
  assert.ok(
    server.authorizations.length > 0 && server.authorizations.every((value) => value === SECRET),
    'the server was asked with the headers',
  );
  await page.getByLabel('fail', { exact: true }).uncheck();
  await page.getByLabel('slow', { exact: true }).uncheck();
  // A changed allow-list needs the URL, which is never shown.
  await form.getByRole('button', { name: 'Save' }).click();
  await field(page, 'metadata.url').getByText("type the server's URL again").waitFor();
  await page.getByLabel('Server URL', { exact: true }).fill(server.url);
  await page.getByLabel('Headers', { exact: true }).fill(`Authorization: ${SECRET}`);
  await form.getByRole('button', { name: 'Save' }).click();
  await form.waitFor({ state: 'detached' });
  assert.deepEqual(await functionNames(), ['calc__add', 'calc__echo_headers']);
  assert.equal((await api(`/tools/${tool.id}`)).body.data.hasHeaders, true);

  // Opened again: the picker shows every tool of the server, the ones left out unticked (so they
  // can be let back in); a rename alone keeps every setting.
  await card.getByRole('button', { name: 'Edit Calc' }).click();
  await page.getByLabel('echo_headers', { exact: true }).waitFor();
  const ticks = async () => {
    const states: [string, boolean][] = [];
    for (const name of ['add', 'echo_headers', 'fail', 'slow'])
      states.push([name, await page.getByLabel(name, { exact: true }).isChecked()]);
    return states;
  };
  assert.deepEqual(await ticks(), [
    ['add', true],
    ['echo_headers', true],
    ['fail', false],
    ['slow', false],
  ]);
  await page.getByLabel('Name', { exact: true }).fill('Calculator');
  await mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, 'mcp-tool-form.png'), fullPage: true });
  assert.ok(!(await page.content()).includes('sk-console-mcp-secret'), 'the page never shows the headers');
  await page.getByRole('form', { name: 'Edit Calc' }).getByRole('button', { name: 'Save' }).click();
  await page.locator('.cards li', { hasText: 'Calculator' }).getByText('MCP · headers set').waitFor();
  const renamed = await api(`/tools/${tool.id}`);
  assert.equal(renamed.body.data.hasHeaders, true);
  assert.ok(!renamed.text.includes('sk-console-mcp-secret'));
  assert.deepEqual(
    ((await api(`/tools/${tool.id}/functions`)).body.data.functions as Json[]).map((fn) => fn.name),
    ['calculator__add', 'calculator__echo_headers'],
  );

  // Ticking the left-out ones again: every tool ticked is no list at all (later tools too).
  await page.locator('.cards li', { hasText: 'Calculator' }).getByRole('button', { name: 'Edit Calculator' }).click();
  const again = page.getByRole('form', { name: 'Edit Calculator' });
  await page.getByLabel('fail', { exact: true }).check();
  await page.getByLabel('slow', { exact: true }).check();
  await page.getByLabel('Server URL', { exact: true }).fill(server.url);
  await page.getByLabel('Headers', { exact: true }).fill(`Authorization: ${SECRET}`);
  await again.getByRole('button', { name: 'Save' }).click();
  await again.waitFor({ state: 'detached' });
  const every = await api(`/tools/${tool.id}/functions?all=true`);
  assert.equal(every.body.data.allowList, null);
  assert.deepEqual(
    (every.body.data.functions as Json[]).map((fn) => fn.name),
    ['calculator__add', 'calculator__echo_headers', 'calculator__fail', 'calculator__slow'],
  );

  // A list naming a tool the server does not show now keeps it when another box is changed.
  const listed = await service.request('PATCH', `/api/v1/tools/${tool.id}`, {
    token,
    body: { metadata: { url: server.url, headers: { Authorization: SECRET }, tools: ['add', 'retired'] } },
  });
  assert.equal(listed.status, 200, listed.text);
  await page.reload();
  await page.locator('.cards li', { hasText: 'Calculator' }).getByRole('button', { name: 'Edit Calculator' }).click();
  const third = page.getByRole('form', { name: 'Edit Calculator' });
  await page.getByLabel('fail', { exact: true }).check();
  await page.getByLabel('Server URL', { exact: true }).fill(server.url);
  await page.getByLabel('Headers', { exact: true }).fill(`Authorization: ${SECRET}`);
  await third.getByRole('button', { name: 'Save' }).click();
  await third.waitFor({ state: 'detached' });
  assert.deepEqual((await api(`/tools/${tool.id}/functions?all=true`)).body.data.allowList, ['add', 'fail', 'retired']);
  assert.deepEqual(errors, []);
});
