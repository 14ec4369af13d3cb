// Times the search statement in this process (no HTTP) on two seeded databases: the searching
// user's chunks fixed, other users' chunks tenfold. OTHERS=N node --import tsx scripts/bench/search-probe.ts
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { openDatabase, closeDatabase } from '../../src/db.js';
import { createSearchStore } from '../../src/documents/search-store.js';
import { seedSearch, COMMON_WORD, RARE_WORD } from './seed.js';
import { percentile } from './options.js';

const others = Number(process.env.OTHERS ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'ams-search-probe-'));
try {
  for (const count of [others / 10, others]) {
    const seeded = seedSearch(join(dir, `s-${count}.db`), count, 'x');
    const db = openDatabase(seeded.path);
    const store = createSearchStore(db);
    for (const word of [RARE_WORD, COMMON_WORD]) {
      const times: number[] = [];
      for (let i = 0; i < 60; i++) {
        const started = performance.now();
        const hits = store.find({ userId: seeded.user.id }, [word], { match: 'all', limit: 20, snippet: { words: 24, marked: true } });
        times.push(performance.now() - started);
        if (hits.length === 0) throw new Error('no hits');
      }
      times.sort((a, b) => a - b);
      console.log(
        `others ${count}: ${word}: p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms (seeded in ${seeded.ms} ms)`,
      );
    }
    closeDatabase(db);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
