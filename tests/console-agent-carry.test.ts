// The Agents page's Export and Import in headless Chromium: Export downloads the agent's file (no
// secret in it); Import shows the dry run's summary (secrets needed, what is left out) and creates
// the agent only on confirmation; Cancel creates nothing; a file that is not JSON is refused in words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startService } from './helpers.js';
import { launchOrSkip, openPage, shot } from './browser.js';

const SECRET = 'Bearer console-carry-secret-3391';

test('the Agents page: Export downloads the file, Import previews it and creates the agent', { timeout: 120_000 }, async (t) => {
  const browser = await launchOrSkip(t);
  if (!browser) return;
  t.after(() => browser.close());
  const service = await startService();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  const { page, problems } = await openPage(context, service);

  await page.goto(`${service.url}/`);
  await page.getByRole('tab', { name: 'Create an account' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Carrier');
  await page.getByLabel('Email', { exact: true }).fill(`carrier.${Date.now()}@example.com`);
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByLabel('Password', { exact: true }).press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
  const token = (await page.evaluate(() => sessionStorage.getItem('agent-console.token')))!;
  const agent = await service.createAgent(token, { name: 'Travelling agent', type: 'VENDOR_A', llm: { model: 'm', provider: 'echo' } });
  const tool = await service.createTool(token, {
    name: 'Search',
    metadata: { url: 'https://search.example.com', headers: { Authorization: SECRET } },
  });
  assert.equal((await service.request('POST', '/api/v1/agent-tools', { token, body: { agentId: agent.id, toolId: tool.id } })).status, 201);
  const agentsNow = async () => (await service.listAll(token, '/agents')).map((a) => a.name);

  await page.reload();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export Travelling agent' }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'Travelling-agent.agent.json');
  const saved = join(service.dir, download.suggestedFilename());
  await download.saveAs(saved);
  const text = readFileSync(saved, 'utf8');
  assert.ok(!text.includes(SECRET), 'no secret in the downloaded file');
  const file = JSON.parse(text);
  assert.equal(file.format, 'agent-service.agent');
  assert.deepEqual(
    file.tools.map((exported: { name: string; secretFields: string[] }) => [exported.name, exported.secretFields]),
    [['Search', ['headers']]],
  );

  // Import: the dry run's summary first, nothing created until confirmed.
  await page.getByLabel('Import an agent file').setInputFiles(saved);
  const preview = page.getByRole('region', { name: 'Import preview' });
  await preview.getByRole('heading', { name: 'Import Travelling agent?' }).waitFor();
  assert.match(await preview.innerText(), /Tools: Search/);
  assert.match(await preview.getByRole('list', { name: 'Secrets needed' }).innerText(), /tools\.0\.metadata\.headers/);
  await shot(page, 'agent-import-preview');
  assert.deepEqual(await agentsNow(), ['Travelling agent'], 'the dry run created nothing');
  await preview.getByRole('button', { name: 'Import Travelling agent' }).click();
  await page.getByRole('heading', { level: 1, name: 'Travelling agent' }).waitFor();
  assert.match(page.url(), /#\/agents\/[0-9a-f-]{36}$/);
  assert.notEqual(page.url().split('/').at(-1), agent.id, 'the new copy is shown');
  assert.deepEqual(await agentsNow(), ['Travelling agent', 'Travelling agent']);

  // A Letta file: what is left out is listed; Cancel creates nothing.
  await page.goto(`${service.url}/#/agents`);
  await page.getByLabel('Import an agent file').setInputFiles(join(import.meta.dirname, 'fixtures', 'letta-agent.af'));
  await preview.getByRole('heading', { name: 'Import support_agent?' }).waitFor();
  assert.match(await preview.getByRole('list', { name: 'Left out' }).innerText(), /check_order_status.*Python source/);
  await preview.getByRole('button', { name: 'Cancel' }).click();
  await preview.waitFor({ state: 'detached' });
  assert.deepEqual(await agentsNow(), ['Travelling agent', 'Travelling agent']);

  // Not JSON: said in words, nothing sent.
  await page
    .getByLabel('Import an agent file')
    .setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('not json') });
  await page.getByText('notes.json is not a JSON file.').waitFor();

  assert.deepEqual(problems, []);
  assert.deepEqual(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations), []);
});
