// Node's modules that only some work needs (calls to users' servers and models, decoding their
// answers, the WAL checkpointer's thread), required at their first use instead of imported at
// start: together they cost ~15 ms of CPU before a process's first answer, for nothing when no
// request needs them. (Types come from `import type`, which loads nothing.)
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function lazily<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}

export const https = lazily(() => require('node:https') as typeof import('node:https'));
export const zlib = lazily(() => require('node:zlib') as typeof import('node:zlib'));
export const dnsPromises = lazily(() => require('node:dns/promises') as typeof import('node:dns/promises'));
export const workerThreads = lazily(() => require('node:worker_threads') as typeof import('node:worker_threads'));
