// The test reporter `npm test` uses: one line per test file as it finishes, every failure in full
// at the end (with what that file wrote to stdout/stderr), and the totals with the real duration. node:test's default reporter prints every test (thousands of lines); this keeps passes
// brief. Usage: node --test --test-reporter=./tests/reporter.mjs ...
import { relative } from 'node:path';
import { inspect } from 'node:util';

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

export default async function* reporter(source) {
  const started = Date.now();
  const totals = { passed: 0, failed: 0, skipped: 0, todo: 0 };
  /** Per file: counts, the names of the tests running at each nesting level, and its output. */
  const files = new Map();
  const failures = [];
  const fileOf = (path) => {
    const key = path ?? '(no file)';
    if (!files.has(key)) files.set(key, { passed: 0, failed: 0, skipped: 0, names: [], output: '' });
    return files.get(key);
  };
  const show = (path) => (path ? relative(process.cwd(), path) : '(no file)');

  for await (const event of source) {
    const data = event.data ?? {};
    switch (event.type) {
      case 'test:start':
        fileOf(data.file).names[data.nesting] = data.name;
        break;
      case 'test:stdout':
      case 'test:stderr':
        fileOf(data.file).output += data.message;
        break;
      case 'test:pass':
      case 'test:fail': {
        if (data.details?.type === 'suite' && event.type === 'test:pass') break;
        const file = fileOf(data.file);
        if (event.type === 'test:pass') {
          const kind = data.skip !== undefined ? 'skipped' : data.todo !== undefined ? 'todo' : 'passed';
          if (kind !== 'todo') file[kind] += 1;
          totals[kind] += 1;
          break;
        }
        // A suite fails because a test in it did (counted there), unless the suite itself threw.
        const error = data.details?.error;
        if (data.details?.type === 'suite' && error?.failureType === 'subtestsFailed') break;
        file.failed += 1;
        totals.failed += 1;
        const path = [...file.names.slice(0, data.nesting), data.name].filter((name) => name !== data.file);
        failures.push({ file: data.file, title: [show(data.file), ...path].join(' › '), error, duration: data.details?.duration_ms });
        break;
      }
      case 'test:complete':
        // A whole file finished (its own entry is named after the file). Its tests' own events may
        // still be on their way (node reports files one after the other), so no counts here.
        if (data.nesting === 0 && data.name === data.file) {
          yield `${data.details?.passed === false ? '✖' : '✔'} ${show(data.file)}  (${seconds(data.details?.duration_ms ?? 0)})\n`;
        }
        break;
      default:
        break;
    }
  }

  if (failures.length > 0) {
    yield `\nFailures (${failures.length}):\n`;
    for (const failure of failures) {
      const cause = failure.error?.cause ?? failure.error;
      yield `\n✖ ${failure.title}${failure.duration === undefined ? '' : ` (${seconds(failure.duration)})`}\n`;
      yield `${inspect(cause, { depth: 6, colors: false }).replace(/^/gm, '  ')}\n`;
    }
    const noisy = [...new Set(failures.map((failure) => failure.file))].filter((file) => fileOf(file).output.trim() !== '');
    for (const file of noisy) yield `\nOutput of ${show(file)}:\n${fileOf(file).output.replace(/^/gm, '  ')}\n`;
  }
  const parts = [`${totals.passed} passed`, `${totals.failed} failed`];
  if (totals.skipped) parts.push(`${totals.skipped} skipped`);
  if (totals.todo) parts.push(`${totals.todo} todo`);
  yield `\n${totals.failed ? '✖' : '✔'} ${parts.join(', ')} in ${files.size} files, ${seconds(Date.now() - started)}\n`;
}
