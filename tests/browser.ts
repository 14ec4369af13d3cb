// Driving the console in headless Chromium (Debian's `chromium`, installed by .ci/run; the browser
// tests skip, saying why, when it cannot start): launching it, a page that records every problem
// (console errors, uncaught errors, CSP violations, requests elsewhere), and screenshots under
// test-output/console/.
import type { TestContext } from 'node:test';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TestService } from './helpers.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// Chromium as root in a sandbox-less container, with its background traffic (updates, sync,
// safe-browsing lookups) off: a page must load with nothing but the service reachable.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SHOTS = join(import.meta.dirname, '..', 'test-output', 'console');

export async function launchOrSkip(t: TestContext): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run does this where apt is available)`);
    return undefined;
  }
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  } catch (error) {
    t.skip(`Chromium at ${CHROMIUM} could not start: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

/** A page that records console errors, uncaught errors, CSP violations and requests elsewhere. */
export async function openPage(context: BrowserContext, service: TestService) {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  const origin = new URL(service.url).origin;
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium logs every 4xx answer to fetch; the flows cause some from the API on purpose (a 422
    // shown at its field, a wrong password). Any other, such as a missing /favicon.ico, is a problem.
    const fromApi = new URL(message.location().url || 'about:blank').pathname.startsWith('/api/v1/');
    if (fromApi && /^Failed to load resource: the server responded with a status of (401|403|404|422|429)/.test(message.text())) return;
    problems.push(`console: ${message.text()}${message.location().url ? ` (${message.location().url})` : ''}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin !== origin && url.protocol !== 'data:') problems.push(`request elsewhere: ${request.url()}`);
  });
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  return { page, problems };
}

export async function shot(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
