// Uploading documents from the console's Documents page, in headless Chromium (./browser.ts): a
// file picked (with the upload's progress shown while it is sent), a file dropped on the page, and
// a refused file named at its field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startService, type TestService } from './helpers.js';
import { launchOrSkip, openPage, shot } from './browser.js';

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

async function signUp(page: Page, service: TestService) {
  await page.goto(`${service.url}/`);
  await page.getByRole('tab', { name: 'Create an account' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Uploader');
  await page.getByLabel('Email', { exact: true }).fill(`uploader.${Date.now()}@example.com`);
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByLabel('Password', { exact: true }).press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
}

async function documentsOf(page: Page, service: TestService): Promise<{ name: string; type: string; status: string }[]> {
  const token = await page.evaluate(() => sessionStorage.getItem('agent-console.token'));
  return (await service.request('GET', '/api/v1/documents', { token: token ?? undefined })).body.data;
}

test('the console in Chromium: upload a document by picking or dropping a file, with progress', { timeout: 180_000 }, async (t) => {
  const browser = await launchOrSkip(t);
  if (!browser) return;
  t.after(() => browser.close());
  const service = await startService({
    ingestion: { enabled: true, concurrency: 1, maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateNetworks: false },
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const { page, problems } = await openPage(context, service);
  await signUp(page, service);

  await t.test('a picked file uploads with its progress shown, then is ingested', async () => {
    await nav(page, 'Documents').click();
    await page.getByRole('button', { name: 'New document' }).click();
    await page.getByLabel('Source', { exact: true }).selectOption('file');
    // Two MiB of text sent at 1 MB/s: the progress shows while it goes.
    const text = 'Capybaras are the largest rodents.\n\n' + 'Filler paragraph about grass.\n\n'.repeat(70_000);
    await page.locator('input[type=file]').setInputFiles({ name: 'capybaras.md', mimeType: 'text/markdown', buffer: Buffer.from(text) });
    await page.getByText(/^capybaras\.md \(2\.\d MiB\)$/).waitFor();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1_000_000 });
    await page.getByRole('button', { name: 'Upload and ingest' }).click();
    await page.locator('.upload-progress', { hasText: /Uploading… \d+%/ }).waitFor();
    // The bar moves as the bytes go out (XMLHttpRequest's upload progress), before the document exists.
    await page.waitForFunction(() => Number(document.querySelector('.upload-progress progress')?.getAttribute('value')) > 0);
    assert.match(await page.locator('.upload-progress').innerText(), /Uploading… \d+%/);
    assert.deepEqual(await documentsOf(page, service), []);
    await shot(page, 'upload-progress');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const row = page.locator('tr', { hasText: 'capybaras.md' });
    await row.locator('.status-ready').waitFor({ timeout: 30_000 });
    assert.equal(await row.locator('td').nth(1).innerText(), 'TXT');
  });

  await t.test('a file dropped on the page opens the form with it; the type is told from the file', async () => {
    await nav(page, 'Documents').click();
    await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
    const dataTransfer = await page.evaluateHandle(() => {
      const transfer = new DataTransfer();
      const captions = 'WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nAxolotls regrow their limbs.\n';
      transfer.items.add(new File([captions], 'lecture.vtt', { type: 'text/vtt' }));
      return transfer;
    });
    await page.locator('section').first().dispatchEvent('drop', { dataTransfer });
    await page.getByText('lecture.vtt (').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Axolotl lecture');
    await page.getByRole('button', { name: 'Upload and ingest' }).click();
    const row = page.locator('tr', { hasText: 'Axolotl lecture' });
    await row.locator('.status-ready').waitFor({ timeout: 30_000 });
    assert.equal(await row.locator('td').nth(1).innerText(), 'VIDEO');
  });

  await t.test('a file whose content does not fit its type is refused, the reason at the file', async () => {
    await page.getByRole('button', { name: 'New document' }).click();
    await page.getByLabel('Source', { exact: true }).selectOption('file');
    await page.getByLabel('Type', { exact: true }).selectOption('PDF');
    await page
      .locator('input[type=file]')
      .setInputFiles({ name: 'not.pdf', mimeType: 'application/pdf', buffer: Buffer.from('plain words') });
    const before = (await documentsOf(page, service)).length;
    await page.getByRole('button', { name: 'Upload and ingest' }).click();
    await page.locator('[data-field="file"] .error-text', { hasText: 'not a PDF' }).waitFor();
    assert.equal((await documentsOf(page, service)).length, before);
    await shot(page, 'upload-refused');
  });

  assert.deepEqual(problems, []);
});
