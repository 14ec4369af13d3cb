// One answer from a script on a worker thread: work that a user's input can make slow or large
// (reading a YAML spec, a PDF) runs there, so it holds no other request, and is bounded. The
// script is plain JavaScript the worker evaluates (nothing to bundle); it posts one message, its
// answer. The worker runs without the service's loader flags (tsx under development) and without
// its environment (a package it loads may act on it: yaml prints every token it reads when
// LOG_STREAM is set), its heap bounded; it is ended once it answered, failed, took too long or
// `signal` aborted. `slots` (a Semaphore) bounds how many run at once: the others wait their turn.
import type { Worker } from 'node:worker_threads';
import { raceAbort } from './abort.js';
import { workerThreads } from './builtins.js';
import type { Semaphore } from './semaphore.js';

export interface WorkerScriptOptions {
  /** The script's `workerData`. */
  workerData: unknown;
  /** Buffers in `workerData` handed over rather than copied. */
  transferList?: ArrayBuffer[];
  /** The worker's JavaScript heap, in MiB. */
  heapMb: number;
  /** The longest it may take; the worker is ended then. */
  timeoutMs: number;
  /** Ends the worker, or the wait for a slot, with its reason. */
  signal?: AbortSignal;
}

/** How a worker ended without answering: it took too long, ran out of heap, threw, or stopped. */
export class WorkerFailed extends Error {
  constructor(
    readonly reason: 'timeout' | 'memory' | 'error' | 'exit',
    message: string,
  ) {
    super(message);
  }
}

/** The message `script` posts, once one of `slots` is free; rejects with WorkerFailed, or with `signal`'s reason. */
export function runWorkerScript<T>(slots: Semaphore, script: string, options: WorkerScriptOptions): Promise<T> {
  const { signal } = options;
  const answer = slots.run(() => {
    // A caller that gave up while it waited: its turn is passed on at once.
    signal?.throwIfAborted();
    return answerOf<T>(script, options);
  });
  return signal ? raceAbort(answer, signal) : answer;
}

function answerOf<T>(script: string, { workerData, transferList, heapMb, timeoutMs, signal }: WorkerScriptOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const worker: Worker = new (workerThreads().Worker)(script, {
      eval: true,
      execArgv: [],
      env: {},
      workerData,
      transferList,
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
    });
    let settled = false;
    const settle = (fail: unknown, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (fail === undefined) resolve(value!);
      else reject(fail);
    };
    const timer = setTimeout(() => settle(new WorkerFailed('timeout', `the worker took more than ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => settle(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: T) => settle(undefined, message));
    worker.on('error', (error: Error & { code?: string }) =>
      settle(new WorkerFailed(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'error', error.message)),
    );
    worker.on('exit', () => settle(new WorkerFailed('exit', 'the worker stopped')));
  });
}
