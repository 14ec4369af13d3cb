// The console's Webhooks page in headless Chromium: create a webhook (the secret shown once, copied
// with the button, and it verifies a delivery), pick events, disable and enable, send a test event
// and read the delivery log with its status, attempts and last error. Skips, saying why, without Chromium.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { startService, waitFor } from './helpers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-sync',
];
const SHOTS = join(import.meta.dirname, '..', 'test-output', 'console');

async function launchOrSkip(t: TestContext): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium is not installed at ${CHROMIUM}`);
    return undefined;
  }
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  } catch (error) {
    t.skip(`Chromium at ${CHROMIUM} could not start: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

async function shot(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

test(
  'the Webhooks page: create (secret once, copied), events, disable and enable, test event, delivery log',
  { timeout: 120_000 },
  async (t) => {
    const browser = await launchOrSkip(t);
    if (!browser) return;
    t.after(() => browser.close());

    // The receiver answers 500 to its first request, 200 after.
    const seen: { body: string; headers: Record<string, string> }[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        seen.push({ body, headers: request.headers as Record<string, string> });
        response.writeHead(seen.length === 1 ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    t.after(() => receiver.close());
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const service = await startService({}, undefined, { webhookRetryDelaysMs: [300] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(service.url).origin });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));

    const email = `hooks.${Date.now()}@example.com`;
    await page.goto(`${service.url}/`);
    await page.getByRole('tab', { name: 'Create an account' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Hook Owner');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByLabel('Password', { exact: true }).press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByText('No webhooks yet.').waitFor();

    // A refused URL is shown at its field; an empty event list too.
    await page.getByLabel('URL', { exact: true }).fill('ftp://127.0.0.1/hook');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.locator('[data-field="url"] .field-error').waitFor();
    await page.getByLabel('URL', { exact: true }).fill(receiverUrl);
    await page.getByLabel('All events, present and future').uncheck();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByText('Events: must name at least one event').waitFor();

    await page.getByLabel('A run succeeded (run.succeeded)').check();
    await page.getByLabel('A document is ready (document.ready)').check();
    await page.getByLabel('Description', { exact: true }).fill('CI pipeline');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.locator('#webhook-secret').inputValue();
    assert.match(secret, /^whsec_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    const row = page.locator('tr', { hasText: 'CI pipeline' });
    await row.waitFor();
    assert.match(await row.innerText(), /run\.succeeded, document\.ready/);
    await shot(page, 'webhooks-01-created');
    // A rotated secret replaces the one shown; it is not the one copied, so the button says Copy again.
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await row.getByRole('button', { name: 'Yes, rotate secret' }).click();
    await page.getByRole('heading', { name: `The new secret of ${receiverUrl}` }).waitFor();
    const rotated = await page.locator('#webhook-secret').inputValue();
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, secret);
    assert.equal(await page.getByRole('button', { name: 'Copied' }).count(), 0, 'the new secret is not marked as copied');
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), rotated);
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.locator('#webhook-secret').count(), 0, 'the secret is gone once dismissed');

    // Disable, then enable again.
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('disabled', { exact: true }).waitFor();
    const [stored] = (await service.listAll(await signIn(service, email), '/webhooks')) as { enabled: boolean }[];
    assert.equal(stored.enabled, false);
    await row.getByRole('button', { name: 'Enable' }).click();
    await row.getByText('enabled', { exact: true }).waitFor();

    // A test event: refused once (500), delivered at the retry; the log shows it.
    await row.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('A test event is on its way').waitFor();
    await waitFor('two attempts at the receiver', () => (seen.length >= 2 ? true : undefined));
    assert.equal(seen[0].headers['webhook-id'], seen[1].headers['webhook-id']);
    assert.equal((new StandardWebhook(secret).verify(seen[1].body, seen[1].headers) as { type: string }).type, 'webhook.test');
    await row.getByRole('link', { name: receiverUrl }).click();
    await page.getByRole('heading', { level: 1, name: 'Deliveries' }).waitFor();
    const delivery = page.locator('tr[data-delivery-id]');
    await delivery.waitFor();
    assert.match(await delivery.innerText(), /webhook\.test/);
    for (let i = 0; i < 50 && !/delivered/.test(await delivery.innerText()); i++) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(100);
    }
    const text = await delivery.innerText();
    assert.match(text, /delivered/);
    assert.match(text, /\b2\b/, 'two attempts');
    assert.match(text, /\b200\b/);
    await shot(page, 'webhooks-02-deliveries');
    assert.deepEqual(problems, []);
    await context.close();
  },
);

async function signIn(service: Awaited<ReturnType<typeof startService>>, email: string): Promise<string> {
  return service.signIn(email, 'correct horse battery');
}
