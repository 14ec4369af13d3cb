// Loaded into a measured server with `--import` (the benchmark's fixed-rate cases): once a second it
// writes one line to stderr saying how long the event loop was held up in that second and what
// garbage collection cost, so a slow request at a fixed rate can be told apart: a stall inside the
// process (the loop was late) or outside it (the loop was on time, the process waited for a core).
//
//   {"loopMonitor":{"loopP99Ms":1.1,"loopMaxMs":3.2,"gcCount":4,"gcMs":2.1,"gcMaxMs":0.9,"majorGcMaxMs":0}}
//
// `--import` runs in every thread of the process, so the service's worker thread (the WAL
// checkpointer, src/db-checkpointer.ts) loads it too: it measures only the main thread, the one that
// answers requests (the worker's lines used to be mixed in with its own: their collections added
// to the main thread's GC time).
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) startMonitor();

function startMonitor(): void {
  const RESOLUTION_MS = 2;
  const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  loop.enable();
  let gcCount = 0;
  let gcMs = 0;
  let gcMaxMs = 0;
  let majorGcMaxMs = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcCount += 1;
      gcMs += entry.duration;
      gcMaxMs = Math.max(gcMaxMs, entry.duration);
      // Mark-sweep-compact (the whole heap), as opposed to a scavenge of the young generation.
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
        majorGcMaxMs = Math.max(majorGcMaxMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });

  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  // The histogram counts a late timer of `resolution` ms: what is over it is the delay.
  const late = (ns: number) => Math.max(0, ms(ns) - RESOLUTION_MS);
  setInterval(() => {
    const report = {
      loopP99Ms: late(loop.percentile(99)),
      loopMaxMs: late(loop.max),
      gcCount,
      gcMs: Math.round(gcMs * 100) / 100,
      gcMaxMs: Math.round(gcMaxMs * 100) / 100,
      majorGcMaxMs: Math.round(majorGcMaxMs * 100) / 100,
    };
    loop.reset();
    gcCount = 0;
    gcMs = 0;
    gcMaxMs = 0;
    majorGcMaxMs = 0;
    process.stderr.write(`${JSON.stringify({ loopMonitor: report })}\n`);
  }, 1000).unref();
}
