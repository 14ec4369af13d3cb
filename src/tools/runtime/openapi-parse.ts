// Reads an OpenAPI document written as YAML, on a worker thread. The `yaml` package needs about
// 2.5 s of CPU for a valid 1 MiB spec (a JSON spec of that size is read in 10–20 ms): on the event
// loop that would hold every other request, and so would any slow input a user can find. On a
// worker it holds nothing, is ended when it takes too long, and what comes back is JSON text,
// which the event loop reads as it reads a JSON spec.
import { createRequire } from 'node:module';
import { Semaphore } from '../../lib/semaphore.js';
import { runWorkerScript, WorkerFailed } from '../../lib/worker-script.js';

/** The longest a YAML spec may take to read; the worker is ended then. */
const YAML_TIMEOUT_MS = 10_000;
/** The most JSON a YAML spec may come to once read (YAML aliases repeat what they name). */
const YAML_MAX_JSON = 2 * 1024 * 1024;
/** YAML specs read at once; more wait their turn (each worker holds its text and tree, tens of MiB). */
const WORKERS = 2;
/** The heap of one worker: a 1 MiB spec of the usual shape needs about half of it. */
const WORKER_HEAP_MB = 128;

/** Why a text cannot be read as one YAML document (said to the user: it names the first error only). */
export class YamlUnreadable extends Error {}

// Plain JavaScript run by the worker (an evaluated script: nothing to bundle), with the `yaml`
// package required from where the service resolves it. It drives the package's parser and composer
// itself, for three reasons:
// - the first error ends the reading: `yaml.parse` collects every error and formats each with its
//   line, which copies the line each time (a 64 KiB line of "}" is 65,000 errors: 6 s; 1 MiB: hours);
// - warnings are dropped: `yaml.parse` prints each one, with the user's text, on the process's stderr;
// - a second document is an error as soon as it starts, not once it has been read.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Composer, Parser } = require(workerData.yaml);
const { text, maxJson } = workerData;
class Stop extends Error {}
const where = (offset) => {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\\n'); i !== -1 && i < offset; i = text.indexOf('\\n', i + 1)) {
    line += 1;
    start = i + 1;
  }
  return 'at line ' + line + ', column ' + (offset - start + 1);
};
function read() {
  const composer = new Composer();
  // The composer catches what a collection throws and reports it again, once per level around it:
  // the first error is thrown again as it is.
  let first;
  const stop = (message, offset) => {
    throw (first ??= new Stop(message + ' ' + where(offset)));
  };
  composer.onError = (source, code, message, warning) => {
    if (first) throw first;
    if (warning) return;
    stop(message, typeof source === 'number' ? source : Array.isArray(source) ? source[0] : source.offset);
  };
  let documents = 0;
  let doc = null;
  const take = (docs) => {
    for (const found of docs) doc = found;
  };
  for (const token of new Parser().parse(text)) {
    // An error between documents is kept by the composer without a report: it is one here.
    if (token.type === 'error') stop(token.message, token.offset);
    if (token.type === 'document' && ++documents > 1) stop('a second YAML document starts', token.offset);
    take(composer.next(token));
  }
  take(composer.end(true, text.length));
  const json = JSON.stringify(doc === null ? null : doc.toJS({ maxAliasCount: 100 })) ?? 'null';
  if (json.length > maxJson) throw new Stop('it comes to more than ' + maxJson / 1024 / 1024 + ' MiB once its aliases are repeated');
  return json;
}
try {
  parentPort.postMessage({ json: read() });
} catch (error) {
  parentPort.postMessage({ error: String((error && error.message) || error) });
}
`;

let yamlPath: string | undefined;
/** The workers reading YAML: WORKERS at once. */
const slots = new Semaphore(WORKERS);

/**
 * The YAML document in `text`, as plain JSON values; throws YamlUnreadable when it is not one YAML
 * document, takes more than YAML_TIMEOUT_MS or more memory than a worker has, or comes to more than
 * YAML_MAX_JSON. An abort of `signal` ends the reading (or the wait for a worker) and rejects with its reason.
 */
export async function readYaml(text: string, signal?: AbortSignal): Promise<unknown> {
  yamlPath ??= createRequire(import.meta.url).resolve('yaml');
  let answer: { json?: string; error?: string };
  try {
    answer = await runWorkerScript(slots, WORKER, {
      workerData: { yaml: yamlPath, text, maxJson: YAML_MAX_JSON },
      heapMb: WORKER_HEAP_MB,
      timeoutMs: YAML_TIMEOUT_MS,
      signal,
    });
  } catch (error) {
    if (!(error instanceof WorkerFailed)) throw error;
    if (error.reason === 'timeout') throw new YamlUnreadable(`reading it as YAML took more than ${YAML_TIMEOUT_MS / 1000} s`);
    if (error.reason === 'memory') throw new YamlUnreadable('reading it as YAML takes more memory than a spec may have');
    throw new YamlUnreadable(error.reason === 'exit' ? 'the YAML reader stopped' : error.message);
  }
  if (answer.json === undefined) throw new YamlUnreadable(String(answer.error).slice(0, 200));
  return JSON.parse(answer.json);
}
