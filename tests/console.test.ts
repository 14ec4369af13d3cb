// The web console at `/`: how it is served (HTTP checks, everywhere) and what a user does with it,
// end to end in headless Chromium (./browser.ts). Each flow saves a screenshot under test-output/console/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Koa from 'koa';
import Router from '@koa/router';
import { h, type VNode } from 'preact';
import type { Page } from 'playwright-core';
import { buildConsole, consoleRoutes, CONSOLE_CSP, type ConsoleBundle } from '../src/console/serve.js';
import { snippetParts } from '../src/console/app/snippet.js';
import { Markdown } from '../src/console/app/markdown.js';
import { MAX_INPUT_CHARS } from '../src/console/app/api.js';
import { MAX_INPUT_CHARS as API_MAX_INPUT_CHARS } from '../src/runs/schema.js';
import type { AppState } from '../src/http/context.js';
import type { ToolProvider } from '../src/lib/tool-contract.js';
import { errorOf, startService, waitFor, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { launchOrSkip, openPage, shot } from './browser.js';

/** The console's JavaScript budget, minified. */
const SCRIPT_BUDGET = 150 * 1024;
/** The first render of the agent list, budget. */
const FIRST_RENDER_BUDGET_MS = 1000;

// ---- Served by the service ---------------------------------------------------------------------

test('GET / answers the console page with a strict policy, and its files with long caching', async (t) => {
  const service = await startService();
  const page = await service.request('GET', '/');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(page.headers.get('content-security-policy'), CONSOLE_CSP);
  assert.match(CONSOLE_CSP, /script-src 'self'(;|$)/);
  assert.match(CONSOLE_CSP, /frame-ancestors 'none'/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  const html = page.body as string;
  assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script');
  assert.doesNotMatch(html, /https?:\/\//, 'nothing from another origin');

  // The script, the stylesheet and the icon (linked, so browsers do not ask for a missing /favicon.ico).
  const names = [...html.matchAll(/(?:src|href)="console\/([^"]+)"/g)].map((match) => match[1]);
  assert.equal(names.length, 3, html);
  assert.match(html, /<link rel="icon" type="image\/svg\+xml" href="console\/icon\.[A-Za-z0-9_-]{16}\.svg">/);
  for (const name of names) {
    assert.match(name, /^(app\.[A-Za-z0-9_-]{16}\.(js|css)|icon\.[A-Za-z0-9_-]{16}\.svg)$/);
    const asset = await fetch(`${service.url}/console/${name}`);
    assert.equal(asset.status, 200);
    assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const type = { js: /^text\/javascript/, css: /^text\/css/, svg: /^image\/svg\+xml$/ }[name.split('.').at(-1)!];
    assert.match(asset.headers.get('content-type') ?? '', type!);
    const body = Buffer.from(await asset.arrayBuffer());
    if (name.endsWith('.js')) {
      t.diagnostic(`console JavaScript: ${body.length} bytes minified (${(body.length / 1024).toFixed(1)} KiB)`);
      assert.ok(body.length < SCRIPT_BUDGET, `the console's JavaScript is ${body.length} bytes, over the ${SCRIPT_BUDGET} budget`);
    }
  }

  // The console's own code never hands text to the HTML parser.
  const appDir = join(import.meta.dirname, '..', 'src', 'console', 'app');
  for (const file of readdirSync(appDir, { recursive: true, encoding: 'utf8' }).filter((name) => /\.tsx?$/.test(name))) {
    assert.ok(
      !/innerHTML|dangerouslySetInnerHTML|insertAdjacentHTML|document\.write/.test(readFileSync(join(appDir, file), 'utf8')),
      `${file} renders text as HTML`,
    );
  }

  // Same page on the next load (ETag), the API and /docs as before, other names under /console/ unknown.
  // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request.
  const etag = page.headers.get('etag');
  assert.ok(etag);
  const revalidated = await new Promise<number | undefined>((resolve, reject) => {
    get(`${service.url}/`, { headers: { 'If-None-Match': etag } }, (response) => {
      response.resume();
      resolve(response.statusCode);
    }).on('error', reject);
  });
  assert.equal(revalidated, 304);
  for (const path of ['/console/app.js', '/console/app.0000000000000000.js', '/console/', '/index.html']) {
    const reply = await service.request('GET', path);
    assert.equal(reply.status, 404, path);
    assert.equal(errorOf(reply).code, 'not_found');
  }
  const missing = await service.request('GET', '/api/v1/nowhere');
  assert.equal(errorOf(missing).code, 'not_found');
  assert.equal((await service.request('GET', '/docs')).status, 200);
  assert.equal((await service.request('POST', '/', { body: {} })).status, 405);
});

test('the console is built once, on first request, and a failed build is tried again', async () => {
  let builds = 0;
  let fail = true;
  const fake = async (): Promise<ConsoleBundle> => {
    builds += 1;
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (fail) {
      fail = false;
      throw new Error('boom');
    }
    return {
      html: Buffer.from('<!DOCTYPE html>'),
      etag: '"x"',
      files: new Map([['app.x.js', { body: Buffer.from('1'), type: 'text/javascript' }]]),
      script: 'app.x.js',
      stylesheet: 'app.x.css',
      icon: 'icon.x.svg',
    };
  };
  const router = new Router<AppState>();
  consoleRoutes(router, fake);
  const app = new Koa<AppState>();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch {
      ctx.status = 500;
    }
  });
  app.use(router.routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    assert.equal(builds, 0, 'nothing is built before the console is asked for');
    assert.equal((await fetch(`${url}/`)).status, 500);
    const replies = await Promise.all([fetch(`${url}/`), fetch(`${url}/console/app.x.js`), fetch(`${url}/`)]);
    assert.deepEqual(
      replies.map((reply) => reply.status),
      [200, 200, 200],
    );
    assert.equal(builds, 2, 'one failed build, then one build shared by concurrent requests');
    await fetch(`${url}/`);
    assert.equal(builds, 2);
  } finally {
    server.close();
  }
});

/** The pids of esbuild processes that are children of this process (Linux only). */
function esbuildChildren(): number[] | undefined {
  const tasks = `/proc/${process.pid}/task`;
  if (!existsSync(tasks)) return undefined;
  const children = readdirSync(tasks).flatMap((task) => {
    try {
      return readFileSync(join(tasks, task, 'children'), 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  });
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('esbuild');
    } catch {
      return false;
    }
  });
}

test('esbuild runs only while the console is built', async (t) => {
  const before = esbuildChildren();
  if (!before) return t.skip('needs /proc to count child processes');
  const bundle = await buildConsole();
  assert.ok(bundle.files.get(bundle.script)!.body.length > 1000);
  // esbuild's stop() signals its process; give it a moment to exit.
  for (let waited = 0; waited < 3000 && esbuildChildren()!.length > before.length; waited += 50)
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(esbuildChildren(), before, 'the build left no esbuild process behind');
});

test('search snippets are split on their marks into plain text', () => {
  assert.deepEqual(snippetParts('a &lt;b&gt; <mark>cat</mark> &amp; <mark>dog&#39;s</mark>'), [
    { text: 'a <b> ', marked: false },
    { text: 'cat', marked: true },
    { text: ' & ', marked: false },
    { text: "dog's", marked: true },
  ]);
  assert.deepEqual(snippetParts('<mark>&lt;img src=x onerror=alert(1)&gt;</mark>'), [
    { text: '<img src=x onerror=alert(1)>', marked: true },
  ]);
});

/** A Preact element tree as HTML-like text, to compare what the Markdown renderer builds. */
function markup(node: unknown): string {
  if (node === null || node === undefined || typeof node === 'boolean') return '';
  if (typeof node === 'string' || typeof node === 'number')
    return String(node).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  if (Array.isArray(node)) return node.map(markup).join('');
  const { type, props } = node as VNode<Record<string, unknown>>;
  if (typeof type === 'function') return markup((type as (props: unknown) => unknown)(props));
  const attributes = Object.entries(props)
    .filter(([name, value]) => name !== 'children' && value !== undefined)
    .map(([name, value]) => ` ${name}="${String(value)}"`)
    .join('');
  return `<${type}${attributes}>${markup(props.children)}</${type}>`;
}
const md = (text: string) => markup(h(Markdown, { text }));

test('answers are drawn from Markdown as elements, never as HTML', () => {
  assert.equal(
    md('Hello **bold** and *em*, `a < b`.'),
    '<div class="markdown"><p>Hello <strong>bold</strong> and <em>em</em>, <code>a &lt; b</code>.</p></div>',
  );
  assert.equal(md('# Title\n\nText\nnext line'), '<div class="markdown"><h4 class="md-h1">Title</h4><p>Text<br></br>next line</p></div>');
  assert.equal(
    md('- one\n- two *x*\n\n1. first\n2. second'),
    '<div class="markdown"><ul><li>one</li><li>two <em>x</em></li></ul><ol><li>first</li><li>second</li></ol></div>',
  );
  assert.equal(md('3. third\n4. fourth'), '<div class="markdown"><ol start="3"><li>third</li><li>fourth</li></ol></div>');
  assert.equal(
    md('```js\nif (a < b) { **not bold** }\n```'),
    '<div class="markdown"><pre class="code" data-language="js"><code>if (a &lt; b) { **not bold** }</code></pre></div>',
  );
  assert.equal(md('> quoted *text*'), '<div class="markdown"><blockquote><p>quoted <em>text</em></p></blockquote></div>');
  assert.equal(md('snake_case_name and 2 * 3 * 4'), '<div class="markdown"><p>snake_case_name and 2 * 3 * 4</p></div>');
  assert.equal(md('\\*not em\\*'), '<div class="markdown"><p>*not em*</p></div>');
  assert.equal(md('---'), '<div class="markdown"><hr></hr></div>');

  // Raw HTML is text.
  assert.equal(
    md('<script>alert(1)</script><img src=x onerror=alert(1)>'),
    '<div class="markdown"><p>&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</p></div>',
  );
  // Links: http(s) only, opened apart from the console.
  const link = (href: string, text: string) => `<a href="${href}" rel="noopener noreferrer" target="_blank">${text}</a>`;
  assert.equal(
    md('[the docs](https://example.com/docs?a=1)'),
    `<div class="markdown"><p>${link('https://example.com/docs?a=1', 'the docs')}</p></div>`,
  );
  assert.equal(
    md('[Otters](https://en.wikipedia.org/wiki/Otter_(disambiguation)).'),
    `<div class="markdown"><p>${link('https://en.wikipedia.org/wiki/Otter_(disambiguation)', 'Otters')}.</p></div>`,
  );
  assert.equal(
    md('See https://example.com/x.'),
    `<div class="markdown"><p>See ${link('https://example.com/x', 'https://example.com/x')}.</p></div>`,
  );
  assert.equal(md('<https://example.com/>'), `<div class="markdown"><p>${link('https://example.com/', 'https://example.com/')}</p></div>`);
  for (const hostile of [
    '[click](javascript:alert(1))',
    '[click](JAVASCRIPT:alert(1))',
    '[click](data:text/html,hi)',
    '[click](vbscript:x)',
    '[click](//evil.example/)',
    '[click](/relative)',
  ]) {
    assert.equal(md(hostile), '<div class="markdown"><p>click</p></div>', hostile);
  }
  assert.doesNotMatch(md('javascript:alert(1) <javascript:alert(1)>'), /<a /);
});

test('Markdown is read in linear time: 1 MiB of hostile text is drawn in seconds, not hours', (t) => {
  const MiB = 1024 * 1024;
  const hostile: [string, string][] = [
    ['stars', '*'.repeat(MiB)],
    ['backticks', '`'.repeat(MiB)],
    [
      'backtick runs of growing length',
      Array.from({ length: 1400 }, (_, index) => '`'.repeat(index + 1))
        .join(' ')
        .slice(0, MiB),
    ],
    ['open code spans', '`a'.repeat(MiB / 2)],
    ['opening emphasis', '*a '.repeat(MiB / 3)],
    ['mixed marks', '**a_ *b __c'.repeat(MiB / 11)],
    ['open brackets', '['.repeat(MiB)],
    ['unclosed links', '[a]('.repeat(MiB / 4)],
    ['links with spaces', '[a](b c'.repeat(MiB / 7)],
    ['autolinks', '<http://'.repeat(MiB / 8)],
    ['bare addresses', 'http://a'.repeat(MiB / 8)],
    ['quotes', '>'.repeat(MiB)],
    ['list items', '- '.repeat(MiB / 2)],
    ['headings', '#'.repeat(MiB)],
    ['heading spaces', `# x${' '.repeat(MiB)}y`],
    // Blocks are read line by line; a quarter of the size keeps the test short.
    ['lines of list items', '1. a\n'.repeat(MiB / 20)],
    ['fences', '```\n'.repeat(MiB / 16)],
    ['escapes', '\\'.repeat(MiB)],
    ['underscores in words', 'a_'.repeat(MiB / 2)],
  ];
  for (const [name, text] of hostile) {
    const started = performance.now();
    const rendered = md(text);
    const ms = performance.now() - started;
    t.diagnostic(`${name}: ${ms.toFixed(0)} ms`);
    // Linear: well under a second each here; a quadratic reading of 1 MiB would take hours.
    assert.ok(ms < 10_000, `${name}: ${ms.toFixed(0)} ms`);
    assert.doesNotMatch(rendered.slice(0, 10_000), /<script/);
  }
});

// ---- In the browser ------------------------------------------------------------------------------

/** A link of the main navigation. */
const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
const field = (page: Page, name: string) => page.locator(`[data-field="${name}"]`);

async function signUp(page: Page, service: TestService, name: string) {
  const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${Date.now()}@example.com`;
  await page.goto(`${service.url}/`);
  await page.getByRole('tab', { name: 'Create an account' }).click();
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  // Submitted from the keyboard.
  await page.getByLabel('Password', { exact: true }).press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
  return email;
}

test('the console in Chromium: sign-up, tokens, prompts, agents, documents, search, sign-out', { timeout: 180_000 }, async (t) => {
  const browser = await launchOrSkip(t);
  if (!browser) return;
  t.after(() => browser.close());

  // A fixture server on loopback holds the document to ingest.
  const fixture = createServer((request, response) => {
    if (request.url === '/otters.txt') {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('Sea otters hold hands while they sleep.\n\nRiver otters <b>slide</b> down muddy banks for fun.');
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
  t.after(() => fixture.close());
  const fixtureUrl = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;

  const service = await startService({
    ingestion: { enabled: true, concurrency: 1, maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateNetworks: true },
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(service.url).origin });
  const { page, problems } = await openPage(context, service);

  await t.test('sign up (an empty agent list says what to do)', async () => {
    // The keyboard reaches the controls, and the focused one is visibly marked.
    await page.goto(`${service.url}/`);
    // The page heading takes the focus once the page is drawn; Tab goes on from there.
    await page.waitForFunction(() => document.activeElement?.id === 'page-title');
    // The tabs show once the service has said that sign-up is open.
    await page.getByRole('tab', { name: 'Sign in' }).waitFor();
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const element = document.activeElement as HTMLElement;
      return { text: element.textContent, outline: getComputedStyle(element).outlineStyle };
    });
    assert.equal(focused.text, 'Sign in');
    assert.notEqual(focused.outline, 'none');
    await signUp(page, service, 'Ada Console');
    await page.getByText('You have no agents yet.').waitFor();
    assert.ok(await page.getByRole('link', { name: 'API reference' }).isVisible());
    const { info } = (await service.request('GET', '/api/v1/openapi.json')).body;
    assert.equal(await page.getByTestId('version').innerText(), `Version ${info.version}`);
    await shot(page, '01-empty-agents');
  });

  await t.test('create a token, copy it, revoke it', async () => {
    await nav(page, 'API tokens').click();
    await page.getByLabel('Description', { exact: true }).fill('backup script');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.locator('#new-token').inputValue();
    assert.ok(secret.length > 40, secret);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    assert.equal((await service.request('GET', '/api/v1/auth/me', { token: secret })).status, 200);
    const row = page.locator('tr', { hasText: 'backup script' });
    await row.waitFor();
    await shot(page, '02-token-created');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await service.request('GET', '/api/v1/auth/me', { token: secret })).status, 401, 'the revoked token no longer works');
  });

  await t.test('a prompt: the validation error is shown at its field, then fixed', async () => {
    await nav(page, 'Prompts').click();
    await page.getByText('No prompts yet.').waitFor();
    await page.getByRole('button', { name: 'New prompt' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Polyglot');
    await page.getByLabel('Template', { exact: true }).fill('You answer in {language}, briefly.');
    await page.getByRole('button', { name: 'Create prompt' }).click();
    const error = field(page, 'input_variables').locator('.field-error');
    await error.waitFor();
    // Said in the words of the form: its field is labelled "Variables", not `input_variables`.
    assert.equal(await error.innerText(), 'the template uses {language} but the Variables field does not list it');
    assert.equal(await field(page, 'input_variables').locator('input').getAttribute('aria-invalid'), 'true');
    assert.equal(await field(page, 'template').locator('.field-error').count(), 0);
    await shot(page, '03-validation-error');
    await page.getByLabel('Variables', { exact: true }).fill('language');
    await page.getByRole('button', { name: 'Create prompt' }).click();
    await page.getByRole('heading', { level: 2, name: 'Polyglot' }).waitFor();
  });

  await t.test('a tag, then an agent with the prompt and the tag; what the user typed stays text', async () => {
    await nav(page, 'Tags').click();
    await page.getByRole('button', { name: 'New tag' }).click();
    await page.getByLabel('Name', { exact: true }).fill('support');
    await page.getByLabel('Colour', { exact: true }).fill('#zz');
    await page.getByRole('button', { name: 'Create tag' }).click();
    await field(page, 'color').locator('.field-error').waitFor();
    await page.getByLabel('Colour', { exact: true }).fill('#1d4ed8');
    await page.getByRole('button', { name: 'Create tag' }).click();
    await page.getByRole('heading', { level: 2, name: 'support' }).waitFor();

    await nav(page, 'Agents').click();
    await page.getByRole('link', { name: 'New agent' }).click();
    const hostile = '<img src=x onerror="window.pwned=1">Otter guide';
    await page.getByLabel('Name', { exact: true }).fill(hostile);
    await page.getByLabel('Provider', { exact: true }).fill('openai-compatible');
    await page.getByLabel('Model', { exact: true }).fill('fake-model');
    await page.getByLabel('Base URL', { exact: true }).fill('http://127.0.0.1:9/v1');
    await page.getByLabel('API key', { exact: true }).fill('sk-console-secret');
    await page.getByLabel('Description', { exact: true }).fill('Knows otters.');
    await page.getByLabel('Prompt', { exact: true }).selectOption({ label: 'Polyglot' });
    await page.getByLabel('support', { exact: true }).check();
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 1, name: hostile }).waitFor();
    assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
    assert.equal(await page.locator('main img').count(), 0, 'the name was not parsed as HTML');
    assert.doesNotMatch(await page.content(), /sk-console-secret/, 'the API key is never shown');
    const [agent] = (await service.request('GET', '/api/v1/agents', { token: await sessionToken(page) })).body.data;
    assert.equal(agent.name, hostile);
    assert.equal(agent.tags[0].name, 'support');
    assert.ok(agent.promptId);
    assert.doesNotMatch(JSON.stringify(agent), /sk-console-secret/);
    assert.equal(agent.llm.hasApiKey, true);

    // Editing: the form never holds the write-only key, and saving other fields keeps it.
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    assert.equal(await page.getByLabel('API key', { exact: true }).inputValue(), '');
    await page.getByText('A key is stored.').waitFor();
    await page.getByLabel('Model', { exact: true }).fill('fake-model-2');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText('openai-compatible · fake-model-2 · http://127.0.0.1:9/v1 · API key stored').waitFor();
    // …and removing it on purpose removes it.
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.getByLabel('Remove the stored API key', { exact: true }).check();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText('openai-compatible · fake-model-2 · http://127.0.0.1:9/v1', { exact: true }).waitFor();
    const edited = (await service.request('GET', `/api/v1/agents/${agent.id}`, { token: await sessionToken(page) })).body.data;
    assert.equal(edited.llm.hasApiKey, false);
  });

  await t.test('a document from a URL becomes ready by itself, its chunks show, and search marks the words', async () => {
    await nav(page, 'Documents').click();
    await page.getByText('No documents yet.').waitFor();
    await page.getByRole('button', { name: 'New document' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Otter notes');
    await page.getByLabel('Type', { exact: true }).selectOption('TXT');
    await page.getByLabel('URL', { exact: true }).fill(`${fixtureUrl}/otters.txt`);
    await page.getByLabel('Chunk size', { exact: true }).fill('60');
    await page.getByLabel('Overlap', { exact: true }).fill('0');
    await page.getByRole('button', { name: 'Create and ingest' }).click();
    const row = page.locator('tr', { hasText: 'Otter notes' });
    // No reload: the list refreshes the status itself while the document is pending or processing.
    await row.locator('.status-ready').waitFor({ timeout: 15_000 });
    await row.getByRole('link', { name: 'Otter notes' }).click();
    await page.locator('.chunks li').first().waitFor();
    assert.ok((await page.locator('.chunks li').count()) >= 2);
    assert.match(await page.locator('.chunks').innerText(), /<b>slide<\/b>/, 'chunk text shown as text');
    await shot(page, '04-document-ready');

    // One that cannot be fetched ends `failed`, with the reason next to the status.
    await nav(page, 'Documents').click();
    await page.getByRole('button', { name: 'New document' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Missing notes');
    await page.getByLabel('Type', { exact: true }).selectOption('TXT');
    await page.getByLabel('URL', { exact: true }).fill(`${fixtureUrl}/missing.txt`);
    await page.getByRole('button', { name: 'Create and ingest' }).click();
    const failed = page.locator('tr', { hasText: 'Missing notes' });
    await failed.locator('.status-failed').waitFor({ timeout: 15_000 });
    assert.match(await failed.locator('.error-text').innerText(), /404/);

    await nav(page, 'Search').click();
    await page.getByLabel('Words to find', { exact: true }).fill('otters slide');
    await page.getByRole('button', { name: 'Search' }).click();
    const hit = page.locator('.hits li').first();
    await hit.waitFor();
    const marks = await hit.locator('mark').allInnerTexts();
    assert.ok(marks.some((text) => /otters/i.test(text)) && marks.includes('slide'), marks.join(','));
    assert.match(await hit.locator('.snippet').innerText(), /<b>/, 'the document text is shown as text, not HTML');
    assert.equal(await hit.locator('.snippet b').count(), 0);
    assert.ok(await hit.getByRole('link', { name: 'Otter notes' }).isVisible());
    await shot(page, '05-search');
  });

  await t.test('link the document to the agent, then unlink it', async () => {
    await nav(page, 'Agents').click();
    await page.locator('.agent-card h2 a').first().click();
    // Only ready documents are offered: the one whose ingestion failed is named as not ready.
    const picker = page.getByLabel('Link a document', { exact: true });
    await picker.waitFor();
    assert.deepEqual(await picker.locator('option').allInnerTexts(), ['(choose)', 'Otter notes']);
    assert.match(await page.getByTestId('documents-not-ready').innerText(), /^1 document is not ready/);
    await picker.selectOption({ label: 'Otter notes' });
    await page.getByRole('button', { name: 'Link', exact: true }).click();
    const linked = page.locator('.linked li', { hasText: 'Otter notes' });
    await linked.waitFor();
    await shot(page, '06-agent');
    await linked.getByRole('button', { name: /Unlink/ }).click();
    await linked.waitFor({ state: 'detached' });
  });

  await t.test('the agent list renders within its budget, at desktop and phone width', async () => {
    const token = await sessionToken(page);
    const tokenId = await page.evaluate(() => sessionStorage.getItem('agent-console.tokenId'));
    const timings: number[] = [];
    for (const width of [1280, 1280, 1280, 390]) {
      const fresh = await browser.newContext({ viewport: { width, height: 844 } });
      await fresh.addInitScript(
        ([value, id]) => {
          sessionStorage.setItem('agent-console.token', value!);
          sessionStorage.setItem('agent-console.tokenId', id!);
        },
        [token, tokenId],
      );
      const { page: other, problems: otherProblems } = await openPage(fresh, service);
      const started = performance.now();
      await other.goto(`${service.url}/#/agents`);
      await other.locator('.agent-card').first().waitFor();
      timings.push(performance.now() - started);
      if (width < 600) {
        const overflow = await other.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `no sideways scrolling at phone width (${overflow}px too wide)`);
        await shot(other, '07-agents-phone');
      } else {
        await shot(other, '07-agents-desktop');
      }
      assert.deepEqual(otherProblems, []);
      await fresh.close();
    }
    const best = Math.min(...timings);
    t.diagnostic(`first render of the agent list: ${timings.map((ms) => ms.toFixed(0)).join(', ')} ms (best ${best.toFixed(0)})`);
    assert.ok(best < FIRST_RENDER_BUDGET_MS, `first render took ${best.toFixed(0)} ms`);
  });

  await t.test('the Content-Security-Policy blocks an injected inline script', async () => {
    // On a page of its own: the blocked script is reported as a console error there, on purpose.
    const { page: probe } = await openPage(context, service);
    await probe.goto(`${service.url}/`);
    await probe.getByRole('heading', { level: 1, name: 'Agent console' }).waitFor();
    await probe.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.inlineRan = true;';
      document.body.append(script);
    });
    await probe.waitForFunction(() => (window as unknown as { cspViolations: string[] }).cspViolations.length > 0);
    assert.equal(await probe.evaluate(() => (window as unknown as { inlineRan?: boolean }).inlineRan), undefined);
    const violations = await probe.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
    assert.match(violations.join(), /script-src/);
    await probe.close();
  });

  await t.test('the account: a wrong current password is refused, a new name is saved', async () => {
    await nav(page, 'Account').click();
    await page.getByLabel('Current password', { exact: true }).fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill('another long passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The current password is wrong.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Your name was saved.').waitFor();
    await page.locator('.who', { hasText: 'Ada Lovelace' }).waitFor();
  });

  await t.test('sign out revokes the sign-in token', async () => {
    const token = await sessionToken(page);
    assert.equal((await service.request('GET', '/api/v1/auth/me', { token })).status, 200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await shot(page, '08-signed-out');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('agent-console.token')), null);
    assert.equal((await service.request('GET', '/api/v1/auth/me', { token })).status, 401, 'the token was revoked, not only forgotten');
  });

  const violations = await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
  assert.deepEqual(violations, [], 'the policy blocked nothing the console needs');
  assert.deepEqual(problems, [], 'no console errors, page errors or requests elsewhere');
  await context.close();
});

async function sessionToken(page: Page): Promise<string> {
  const token = await page.evaluate(() => sessionStorage.getItem('agent-console.token'));
  assert.ok(token, 'signed in');
  return token;
}

test(
  'chat in Chromium: prompt variables, a streamed answer with a tool step, sessions, stop, an upstream error, the runs',
  { timeout: 180_000 },
  async (t) => {
    const browser = await launchOrSkip(t);
    if (!browser) return;
    t.after(() => browser.close());
    const fake = await startFakeOpenAI();
    let tools: ToolProvider = async () => ({ tools: [], warnings: [] });
    const service = await startService({}, undefined, { toolProvider: (...args) => tools(...args) });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const { page, problems } = await openPage(context, service);

    await signUp(page, service, 'Grace Chat');
    const token = await sessionToken(page);

    // A prompt with a variable, a tool and the agent, all through the console.
    await nav(page, 'Prompts').click();
    await page.getByRole('button', { name: 'New prompt' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Otter expert');
    await page.getByLabel('Template', { exact: true }).fill('You are an otter expert. Answer in {language}.');
    await page.getByLabel('Variables', { exact: true }).fill('language');
    await page.getByRole('button', { name: 'Create prompt' }).click();
    await page.getByRole('heading', { level: 2, name: 'Otter expert' }).waitFor();

    await nav(page, 'Tools').click();
    // The other direction: the agents from an MCP host, with the URL and a ready mcp.json.
    const panel = page.getByRole('region', { name: 'Use your agents from an MCP host' });
    assert.equal(await panel.locator('[data-field="mcp-url"]').textContent(), `${service.url}/mcp`);
    const server = { agents: { type: 'http', url: `${service.url}/mcp`, headers: { Authorization: 'Bearer <your API token>' } } };
    assert.deepEqual(JSON.parse((await panel.locator('[data-field="mcp-json"]').textContent()) ?? ''), { mcpServers: server });
    assert.deepEqual(JSON.parse((await panel.locator('[data-field="mcp-json-vscode"]').textContent()) ?? ''), { servers: server });
    await page.getByRole('button', { name: 'New tool' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Otter facts');
    await page.getByLabel('Description', { exact: true }).fill('Looks up facts about otters.');
    await page.getByLabel('Settings (JSON)', { exact: true }).fill('{"url": "http://127.0.0.1:9"}');
    await page.getByRole('button', { name: 'Create tool' }).click();
    await page.getByRole('heading', { level: 2, name: 'Otter facts' }).waitFor();

    await nav(page, 'Agents').click();
    await page.getByRole('link', { name: 'New agent' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Otter bot');
    await page.getByLabel('Provider', { exact: true }).fill('openai-compatible');
    await page.getByLabel('Model', { exact: true }).fill('fake-model');
    await page.getByLabel('Base URL', { exact: true }).fill(fake.url);
    await page.getByLabel('Description', { exact: true }).fill('Answers questions about otters.');
    await page.getByLabel('Prompt', { exact: true }).selectOption({ label: 'Otter expert' });
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Otter bot' }).waitFor();
    await page.getByLabel('Link a tool', { exact: true }).selectOption({ label: 'Otter facts' });
    await page.getByRole('button', { name: 'Link', exact: true }).click();
    await page.locator('.linked li', { hasText: 'Otter facts' }).waitFor();

    // The run engine's tool seam: the linked tool answers from here (real tool types plug in the same way).
    const [tool] = (await service.request('GET', '/api/v1/tools', { token })).body.data;
    tools = async () => ({
      tools: [
        {
          name: 'otter_facts',
          description: 'Looks up facts about otters.',
          parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
          toolId: tool.id,
          toolName: tool.name,
          call: async (args) => `Fact for ${JSON.stringify(args)}: sea otters hold hands while they sleep.`,
        },
      ],
      warnings: [],
    });

    await t.test('a streamed answer with a tool step', async () => {
      fake.reply(
        { toolCalls: [{ name: 'otter_facts', arguments: '{"query":"sleep"}' }] },
        { text: 'Sea otters hold hands while they sleep, so they do not drift apart.', chunkDelayMs: 120 },
      );
      await page.getByRole('link', { name: 'Chat', exact: true }).click();
      await page.getByLabel('language', { exact: true }).fill('English');
      await page.getByLabel('Message', { exact: true }).fill('How do otters sleep?');
      await page.getByLabel('Message', { exact: true }).press('Enter');
      const turn = page.locator('.turn').last();
      // Tokens appear as they arrive: part of the answer is on screen before the rest.
      await page.waitForFunction(() => {
        const answer = document.querySelector('.turn:last-of-type .answer')?.textContent ?? '';
        return answer.includes('Sea otters') && !answer.includes('apart.');
      });
      assert.equal(await turn.getAttribute('data-state'), 'streaming');
      assert.ok(await page.getByRole('button', { name: 'Stop' }).isVisible());
      await page.locator('.turn[data-state="done"]').waitFor();
      assert.equal(await turn.locator('.answer').innerText(), 'Sea otters hold hands while they sleep, so they do not drift apart.');
      const step = turn.locator('.step');
      assert.match(await step.locator('summary').innerText(), /Otter facts.*done/);
      await step.locator('summary').click();
      assert.match(await step.innerText(), /sea otters hold hands while they sleep/);
      // The prompt, filled with the variable, was the system message.
      assert.match(fake.requests.at(-2)!.body.messages[0].content, /Answer in English\./);
      await page.locator('.sessions li').first().waitFor();
      // A session is named by its first message.
      assert.match(await page.locator('.sessions li').first().innerText(), /^How do otters sleep\?\s[\s\S]*2 messages/);
      await shot(page, '09-chat');

      // The prompt's variables are remembered for the agent: a later visit starts with them.
      await page.locator('.crumbs').getByRole('link', { name: 'Otter bot' }).click();
      await page.getByRole('link', { name: 'Chat', exact: true }).click();
      assert.equal(await page.getByLabel('language', { exact: true }).inputValue(), 'English');
      await page.locator('.sessions li button.link').first().click();
      await page.locator('.turn .message.user', { hasText: 'How do otters sleep?' }).waitFor();
    });

    await t.test('an answer in Markdown is drawn as such, never as HTML', async () => {
      fake.reply({
        text: '**Sea otters** hold hands.\n\n- one\n- `two`\n\n```\n<b>code</b>\n```\n\n[More](https://example.com/otters) and [bad](javascript:alert(1)) <script>window.pwned=1</script><img src=x onerror="window.pwned=1">',
      });
      await page.getByLabel('Message', { exact: true }).fill('Show me Markdown.');
      await page.getByLabel('Message', { exact: true }).press('Enter');
      const turn = page.locator('.turn[data-state="done"]', { hasText: 'Show me Markdown.' });
      await turn.waitFor();
      const answer = turn.locator('.answer');
      assert.equal(await answer.locator('strong').innerText(), 'Sea otters');
      assert.deepEqual(await answer.locator('li').allInnerTexts(), ['one', 'two']);
      assert.equal(await answer.locator('li code').innerText(), 'two');
      assert.equal(await answer.locator('pre code').innerText(), '<b>code</b>');
      const links = answer.locator('a');
      assert.equal(await links.count(), 1, 'only the http(s) link is a link');
      assert.equal(await links.getAttribute('href'), 'https://example.com/otters');
      assert.equal(await links.getAttribute('rel'), 'noopener noreferrer');
      assert.match(await answer.innerText(), /and bad <script>window\.pwned=1<\/script><img src=x/);
      assert.equal(await answer.locator('script, img, b').count(), 0);
      assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
    });

    await t.test('a message over the limit stays in the box, counted; a long one is folded', async () => {
      const box = page.getByLabel('Message', { exact: true });
      await box.fill('o'.repeat(MAX_INPUT_CHARS + 1));
      assert.equal(
        await page.getByTestId('input-count').innerText(),
        `${(MAX_INPUT_CHARS + 1).toLocaleString('en')} / ${MAX_INPUT_CHARS.toLocaleString('en')} characters`,
      );
      await page.getByText('The message is 1 characters too long').waitFor();
      assert.ok(await page.getByRole('button', { name: 'Send' }).isDisabled());
      const turnsBefore = await page.locator('.turn').count();
      await box.press('Enter');
      assert.equal((await box.inputValue()).length, MAX_INPUT_CHARS + 1, 'the text stays in the box');
      assert.equal(await page.locator('.turn').count(), turnsBefore, 'nothing was sent');

      // 20,000 characters: sent, and drawn folded with a control to unfold it.
      fake.reply({ text: 'That is long.' });
      await box.fill('otters '.repeat(20_000 / 7));
      await box.press('Enter');
      await page.waitForFunction((count) => document.querySelectorAll('.turn[data-state="done"]').length > count, turnsBefore);
      const turn = page.locator('.turn').last();
      const bubble = turn.locator('.message.user');
      assert.ok((await bubble.boundingBox())!.height < 600, `folded: ${(await bubble.boundingBox())!.height}px`);
      await bubble.getByRole('button', { name: 'Show all' }).click();
      assert.ok((await bubble.boundingBox())!.height > 2000, 'unfolded');
      await bubble.getByRole('button', { name: 'Show less' }).click();
      assert.ok((await bubble.boundingBox())!.height < 600);
      assert.equal(await box.inputValue(), '', 'a sent message leaves the box');
    });

    await t.test('Stop cancels the run; an upstream error is said in the conversation', async () => {
      fake.reply({ hangAfter: ['Let ', 'me ', 'think'] });
      await page.getByLabel('Message', { exact: true }).fill('Tell me more.');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.waitForFunction(() => (document.querySelector('.turn:last-of-type .answer')?.textContent ?? '').includes('think'));
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.locator('.turn[data-state="stopped"]').waitFor();
      assert.match(await page.locator('.turn').last().innerText(), /Stopped: the run was cancelled\./);
      await fake.waitForAbort(fake.requests.at(-1)!);

      fake.reply({ status: 500, message: 'the model fell over' });
      await page.getByLabel('Message', { exact: true }).fill('Still there?');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('.turn[data-state="failed"]').waitFor();
      assert.match(
        await page.locator('.turn').last().locator('.notice.error').innerText(),
        /The model endpoint \S+ answered 500.*the model fell over/s,
      );
      assert.equal(await page.locator('.turn').last().locator('.message.assistant').count(), 0, 'no empty answer bubble');
    });

    await t.test('sessions: a new one starts empty, an earlier one comes back, and can be deleted', async () => {
      await page.getByRole('button', { name: 'New session' }).click();
      await page.getByText('Ask Otter bot something to start.').waitFor();
      await page.locator('.sessions li button.link').first().click();
      await page.locator('.turn .message.user', { hasText: 'How do otters sleep?' }).waitFor();
      assert.match(await page.locator('.turn').first().locator('.answer').innerText(), /drift apart/);
    });

    await t.test("the agent's runs, and one run in full", async () => {
      await page.locator('.crumbs').getByRole('link', { name: 'Otter bot' }).click();
      await page.getByRole('link', { name: 'Runs', exact: true }).click();
      const rows = page.locator('tbody tr');
      await rows.first().waitFor();
      const statuses = await page.locator('tbody .badge').allInnerTexts();
      assert.deepEqual(statuses, ['failed', 'cancelled', 'succeeded', 'succeeded', 'succeeded'], 'newest first');
      await rows.last().getByRole('link').click();
      await page.getByRole('heading', { level: 1, name: 'Run', exact: true }).waitFor();
      await page.locator('.crumbs').getByRole('link', { name: 'Otter bot' }).waitFor();
      assert.match(await page.locator('main').innerText(), /succeeded[\s\S]*How do otters sleep\?[\s\S]*drift apart[\s\S]*Otter facts/);
      await shot(page, '10-run');

      // Back in the chat, delete the session.
      await page.getByRole('link', { name: 'Open the conversation' }).click();
      await page.locator('.sessions li').first().getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await page.getByText('No earlier sessions.').waitFor();
    });

    await t.test('the agent list', async () => {
      await nav(page, 'Agents').click();
      await page.locator('.agent-card').first().waitFor();
      assert.match(await page.locator('.agent-card').first().innerText(), /Answers questions about otters\./);
      await shot(page, '11-agents');
    });

    await t.test('a message the service refuses goes back into the box', async () => {
      const gone = (
        await service.request('POST', '/api/v1/agents', {
          token,
          body: { name: 'Short-lived', type: 'VENDOR_A', llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url } },
        })
      ).body.data;
      await page.goto(`${service.url}/#/agents/${gone.id}/chat`);
      await page.getByLabel('Message', { exact: true }).fill('Are you there?');
      assert.equal((await service.request('DELETE', `/api/v1/agents/${gone.id}`, { token })).status, 200);
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('.turn[data-state="failed"]').waitFor();
      assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), 'Are you there?');
    });

    await t.test('a token revoked elsewhere: the next request signs the console out and forgets it', async () => {
      assert.ok(
        await page.evaluate(() => Object.keys(localStorage).some((key) => key.startsWith('agent-console.variables.'))),
        'variables are remembered while signed in',
      );
      const tokenId = await page.evaluate(() => sessionStorage.getItem('agent-console.tokenId'));
      assert.equal((await service.request('DELETE', `/api/v1/api-tokens/${tokenId}`, { token })).status, 200);
      await nav(page, 'Tools').click();
      await page.getByText('Your session has ended').waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('agent-console.token')), null);
      assert.deepEqual(await page.evaluate(() => Object.keys(localStorage)), [], 'signing out forgets the remembered variables');
    });

    assert.deepEqual(problems, [], 'no console errors, page errors or requests elsewhere');
    await context.close();
  },
);

test('every page fits a phone (390 px) without sideways scrolling, with data in its lists', { timeout: 180_000 }, async (t) => {
  const browser = await launchOrSkip(t);
  if (!browser) return;
  t.after(() => browser.close());

  // A document to ingest (ready, with chunks) and one that fails, from a fixture server on loopback.
  const fixture = createServer((request, response) => {
    if (request.url === '/field-guide/otters-and-their-rivers.txt') {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(
        'Sea otters hold hands while they sleep.\n\nRiver otters slide down muddy banks for fun.\n\nhttps://example.com/a/very/long/address/that/does/not/break/anywhere/otters',
      );
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
  t.after(() => fixture.close());
  const fixtureUrl = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  const fake = await startFakeOpenAI();
  const service = await startService({
    ingestion: { enabled: true, concurrency: 1, maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateNetworks: true },
  });

  // Everything a page lists, through the API.
  const { email, password } = await service.signUp('Phone Reader');
  const signIn = await service.request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
  const { token, apiToken } = signIn.body.data;
  const api = async (method: string, path: string, body?: unknown) => {
    const reply = await service.request(method, `/api/v1${path}`, { token, body });
    assert.ok(reply.status < 300, `${method} ${path}: ${JSON.stringify(reply.body)}`);
    return reply.body.data;
  };
  await api('POST', '/api-tokens', { description: 'nightly backup script on the office server', expiresAt: '2099-01-01T00:00:00Z' });
  const tag = await api('POST', '/tags', { name: 'customer-support', color: '#1d4ed8' });
  const prompt = await api('POST', '/prompts', {
    name: 'Otter expert',
    template: 'You are an otter expert. Answer in {language}.',
    input_variables: ['language'],
  });
  const tool = await api('POST', '/tools', { name: 'Otter facts', type: 'SEARCH', description: 'Looks up facts about otters.' });
  const ready = await api('POST', '/documents', {
    name: 'Otter field guide',
    type: 'TXT',
    url: `${fixtureUrl}/field-guide/otters-and-their-rivers.txt`,
  });
  await api('POST', '/documents', {
    name: 'Missing notes',
    type: 'TXT',
    url: `${fixtureUrl}/field-guide/a-document-that-is-not-there-at-all.txt`,
  });
  const agent = await api('POST', '/agents', {
    name: 'Otter bot',
    type: 'VENDOR_A',
    llm: { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url },
    hasMemory: true,
    promptId: prompt.id,
    tags: [tag.id],
    description: 'Answers questions about otters.',
  });
  await waitFor(
    'the document is ready',
    async () => ((await api('GET', `/documents/${ready.id}`)).status === 'ready' ? true : undefined),
    15_000,
  );
  await api('POST', '/agent-documents', { agentId: agent.id, documentId: ready.id });
  await api('POST', '/agent-tools', { agentId: agent.id, toolId: tool.id });
  fake.reply({
    text: 'Sea otters hold hands while they sleep: https://example.com/a/very/long/address/that/does/not/break/anywhere/otters',
  });
  const run = await api('POST', `/agents/${agent.id}/invoke`, {
    input: 'How do otters sleep?',
    variables: { language: 'English' },
    sessionId: 'phone-session',
  });

  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  await context.addInitScript(
    ([value, id]) => {
      sessionStorage.setItem('agent-console.token', value!);
      sessionStorage.setItem('agent-console.tokenId', id!);
    },
    [token, apiToken.id],
  );
  const { page, problems } = await openPage(context, service);

  // Every route, with what shows that its data is drawn.
  const routes: [string, string][] = [
    ['/agents', '.agent-card'],
    ['/agents/new', 'form'],
    [`/agents/${agent.id}`, '.linked li'],
    [`/agents/${agent.id}/edit`, 'form'],
    [`/agents/${agent.id}/chat?session=phone-session`, '.turn'],
    [`/agents/${agent.id}/runs`, 'tbody tr'],
    [`/runs/${run.runId}`, 'dl.facts'],
    ['/documents', 'tbody tr .status-failed'],
    [`/documents/${ready.id}`, '.chunks li'],
    ['/search?q=otters', '.hits li'],
    ['/tools', '.card h2'],
    ['/prompts', '.card h2'],
    ['/tags', '.card h2'],
    ['/tokens', 'tbody tr'],
    ['/account', 'form'],
    ['/nowhere', 'h1'],
  ];
  const tooWide: string[] = [];
  for (const [route, drawn] of routes) {
    await page.goto(`${service.url}/#${route}`);
    await page.locator('main').locator(drawn).first().waitFor();
    await page.waitForFunction(() => !document.querySelector('.loading'));
    const { overflow, culprits } = await page.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      // The innermost elements reaching past the right edge, to say what to fix.
      culprits: [...document.querySelectorAll('body *')]
        // (No named functions in here: the test's compiler would wrap them in a helper the page lacks.)
        .filter(
          (element) =>
            (element.getBoundingClientRect().right > window.innerWidth + 0.5 &&
              ![...element.children].some((child) => child.getBoundingClientRect().right > window.innerWidth + 0.5)) ||
            (element.clientWidth > 0 && element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).overflowX === 'visible'),
        )
        .slice(-3)
        .map(
          (element) => `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).split(' ').join('.')}` : ''}`,
        ),
    }));
    if (overflow > 0) tooWide.push(`${route}: ${overflow} px too wide (${culprits.join(', ')})`);
    await shot(
      page,
      `12-phone${route
        .split('?')[0]
        .replace(/\/[0-9a-f-]{36}/g, '/id')
        .replace(/\W+/g, '-')}`,
    );
  }
  assert.deepEqual(tooWide, [], 'no page scrolls sideways at 390 px');
  assert.deepEqual(problems, []);
  await context.close();
});

test("the console's message limit is the API's", () => {
  assert.equal(MAX_INPUT_CHARS, API_MAX_INPUT_CHARS);
});

test('with sign-up closed, the console offers only sign-in (it asks GET /auth/options)', { timeout: 60_000 }, async (t) => {
  const closed = await startService({ signUp: false });
  const options = await closed.request('GET', '/api/v1/auth/options');
  assert.equal(options.status, 200);
  assert.deepEqual(options.body.data, { signUp: false });
  const open = await startService();
  assert.deepEqual((await open.request('GET', '/api/v1/auth/options')).body.data, { signUp: true });

  const browser = await launchOrSkip(t);
  if (!browser) return;
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const { page, problems } = await openPage(context, closed);
  await page.goto(`${closed.url}/`);
  await page.getByTestId('sign-up-closed').waitFor();
  assert.match(await page.getByTestId('sign-up-closed').innerText(), /created by its operator/);
  assert.equal(await page.getByRole('tab', { name: 'Create an account' }).count(), 0);
  assert.ok(await page.getByRole('button', { name: 'Sign in' }).isVisible());
  assert.deepEqual(problems, []);
  await context.close();
});
