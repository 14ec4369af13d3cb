// The written documentation against the code: the endpoint table of docs/api.md lists exactly the
// routes the app mounts, and every link between the README and the files under docs/ (to a file,
// and to a heading in it) leads somewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { startService } from './helpers.js';
import { root } from './run-script.js';

const API_DOC = join(root, 'docs', 'api.md');

/** The lines of a markdown file that are not inside a fenced code block. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** `METHOD /path` of each row of the endpoint table (the table whose header is `| orig. | Method | Path |`). */
function endpointRows(text: string): string[] {
  const lines = proseLines(text);
  const header = lines.findIndex((line) => /^\|\s*orig\.\s*\|\s*Method\s*\|\s*Path\s*\|/.test(line));
  assert.notEqual(header, -1, 'docs/api.md has the endpoint table');
  const rows: string[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [, , method, path] = line.split('|').map((cell) => cell.trim());
    rows.push(`${method} ${path}`);
  }
  return rows;
}

test('the endpoint table of docs/api.md lists every mounted route, and nothing else', async () => {
  const { app, close } = await startService();
  // The table writes paths under /api/v1 without the prefix, the others (root routes) whole, and
  // parameters as {name}.
  const mounted = app.routes.map((route) => `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`);
  await close();
  const documented = endpointRows(readFileSync(API_DOC, 'utf8'));
  const missing = mounted.filter((route) => !documented.includes(route));
  const extra = documented.filter((row) => !mounted.includes(row));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, 'missing: mounted routes without a row; extra: rows without a route');
  // The same number of each: POST /agents is two routes (an agent, or the link form) and two rows.
  assert.deepEqual([...documented].sort(), [...mounted].sort());
});

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The targets of the inline links and images of a markdown file, outside code. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, (code) => (code.startsWith('`[') ? code.slice(1, -1) : ''));
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) targets.push(match[1]);
  }
  return targets;
}

test('every link of the README and docs/ to a file of the repository, or to a heading, leads somewhere', () => {
  const files = [
    join(root, 'README.md'),
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(root, 'docs', name)),
  ];
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const target of linkTargets(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      checked += 1;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const destination = path === '' ? file : resolve(dirname(file), decodeURI(path));
      const where = `${relative(root, file)} → ${target}`;
      if (!existsSync(destination)) {
        broken.push(`${where}: no such file`);
      } else if (anchor !== undefined && !anchorsOf(readFileSync(destination, 'utf8')).has(anchor)) {
        broken.push(`${where}: no heading with that anchor in ${relative(root, destination)}`);
      }
    }
  }
  assert.ok(checked > 20, `found only ${checked} links: the link reader is broken`);
  assert.deepEqual(broken, []);
});
