// The docs page at /docs: Swagger UI served by the service itself (no CDN), rendering the OpenAPI
// document. The HTTP checks run everywhere; the rendering check drives headless Chromium through
// tests/browser.ts and is skipped, saying why, when Chromium cannot start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { DOCS_CSP } from '../src/docs/page.js';
import { errorOf, startService } from './helpers.js';
import { launchOrSkip } from './browser.js';

test('GET /docs answers the page without a token, with a strict Content-Security-Policy', async () => {
  const service = await startService();
  const reply = await service.request('GET', '/docs');
  assert.equal(reply.status, 200);
  assert.match(reply.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(reply.headers.get('content-security-policy'), DOCS_CSP);
  assert.match(DOCS_CSP, /script-src 'self'(;|$)/);
  assert.match(DOCS_CSP, /connect-src 'self'(;|$)/);
  const html = reply.body as string;
  assert.match(html, /data-spec-url="api\/v1\/openapi\.json"/);
  assert.doesNotMatch(html, /https?:\/\//, 'the page loads nothing from another origin');
  assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script');

  // Every file the page names is served from this origin, with its type; /docs/ works too.
  const base = new URL('/docs', service.url);
  for (const [, href] of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
    const url = new URL(href, base);
    const asset = await service.request('GET', url.pathname + url.search);
    assert.equal(asset.status, 200, url.pathname);
    const type = asset.headers.get('content-type') ?? '';
    if (url.pathname.endsWith('.js')) assert.match(type, /^text\/javascript/);
    if (url.pathname.endsWith('.css')) assert.match(type, /^text\/css/);
    if (url.pathname.endsWith('.json')) assert.match(type, /^application\/json/);
  }
  const slash = await service.request('GET', '/docs/');
  assert.equal(slash.status, 200);
  assert.match(slash.body as string, /src="swagger-ui-bundle\.js"/);
  assert.match(slash.body as string, /data-spec-url="\.\.\/api\/v1\/openapi\.json"/);
});

test('the docs files are revalidated with an ETag, and nothing else under /docs/ is served', async () => {
  const service = await startService();
  const first = await service.request('GET', '/docs/swagger-ui-bundle.js');
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('cache-control'), 'no-cache');
  const etag = first.headers.get('etag');
  assert.ok(etag);
  // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request.
  const status = await new Promise<number | undefined>((resolve, reject) => {
    get(`${service.url}/docs/swagger-ui-bundle.js`, { headers: { 'If-None-Match': etag } }, (response) => {
      response.resume();
      resolve(response.statusCode);
    }).on('error', reject);
  });
  assert.equal(status, 304);

  for (const path of [
    '/docs/package.json',
    '/docs/index.html',
    '/docs/swagger-ui-bundle.js.map',
    '/docs/..%2Fpackage.json',
    '/docs/%2e%2e/%2e%2e/package.json',
  ]) {
    const reply = await service.request('GET', path);
    assert.equal(reply.status, 404, path);
    assert.equal(errorOf(reply).code, 'not_found');
  }
  const post = await service.request('POST', '/docs', { body: {} });
  assert.equal(post.status, 404);
});

test('the docs page renders the endpoint list in headless Chromium, from this origin only', { timeout: 120_000 }, async (t) => {
  const browser = await launchOrSkip(t);
  if (!browser) return;
  t.after(() => browser.close());
  const service = await startService();
  const origin = new URL(service.url).origin;

  const context = await browser.newContext();
  const page = await context.newPage();
  const elsewhere: string[] = [];
  const failures: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin !== origin && url.protocol !== 'data:') elsewhere.push(request.url());
  });
  page.on('requestfailed', (request) => failures.push(`${request.url()}: ${request.failure()?.errorText}`));
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
  // What the Content-Security-Policy blocked, if anything.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event: SecurityPolicyViolationEvent) =>
      seen.push(`${event.violatedDirective} ${event.blockedURI}`),
    );
  });

  const response = await page.goto(`${service.url}/docs`);
  assert.equal(response?.status(), 200);
  await page.locator('.opblock-summary-path').first().waitFor({ timeout: 30_000 });
  const paths = await page.locator('.opblock-summary-path').allTextContents();
  for (const path of ['/api/v1/agents', '/api/v1/agents/{id}', '/api/v1/agent-tools', '/api/v1/agent-documents/{id}', '/healthz']) {
    assert.ok(paths.includes(path), `${path} is listed (found: ${paths.join(', ')})`);
  }
  const document = (await service.request('GET', '/api/v1/openapi.json')).body;
  const operations = Object.values<Record<string, unknown>>(document.paths).reduce((count, item) => count + Object.keys(item).length, 0);
  assert.equal(paths.length, operations, 'one entry per documented operation');
  assert.ok(await page.getByText('Agent management service').first().isVisible());

  // Opening an operation shows what the document says of it.
  await page
    .locator('.opblock-summary-path', { hasText: /^\/api\/v1\/agents\/\{id\}$/ })
    .first()
    .click();
  await page.getByText('The agent.', { exact: true }).first().waitFor({ timeout: 10_000 });

  // "Try it out" calls the service from the page (the policy's connect-src allows this origin).
  const health = page.locator('#operations-Service-getHealth');
  await health.locator('.opblock-summary').click();
  await health.getByRole('button', { name: 'Try it out' }).click();
  await health.getByRole('button', { name: 'Execute' }).click();
  const live = health.locator('.live-responses-table');
  await live.locator('.response-col_status').first().waitFor({ timeout: 10_000 });
  assert.match(await live.first().innerText(), /"status": "ok"/);

  const violations = await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
  assert.deepEqual(violations, [], 'the Content-Security-Policy blocked nothing the page needs');
  assert.deepEqual(elsewhere, [], 'the page asked for nothing outside the service');
  assert.deepEqual(failures, []);
  await context.close();
});
