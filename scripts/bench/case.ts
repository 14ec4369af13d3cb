// A benchmark case (scripts/bench/cases/<name>.ts): its name for --only, the targets it checks and
// how it runs. main.ts runs the selected ones from its table: first the cases on the main database,
// as a group beside the shared servers (shared-servers.ts), then each case that brings its own.
import type { CaseKey } from './options.js';
import type { BenchContext } from './context.js';
import type { CaseReport } from './report.js';
import type { MainDatabase, SharedServers } from './shared-servers.js';

interface CaseBase {
  name: CaseKey;
  /** The targets it checks, worded as the report words them; it reports each of them, and no other. */
  targets: readonly string[];
}

/**
 * A case on the main database. In table order, every selected shared case's `beforeServers` runs
 * (nothing else running), then the shared servers start, then every one's `run`, then they stop.
 */
export interface SharedCase extends CaseBase {
  uses: 'shared servers';
  beforeServers?(ctx: BenchContext & { main: MainDatabase }): Promise<CaseReport>;
  run?(ctx: BenchContext & { main: MainDatabase; servers: SharedServers }): Promise<CaseReport>;
}

/** A case that seeds its own database and starts (and stops) its own servers. */
export interface OwnCase extends CaseBase {
  uses: 'own servers';
  run(ctx: BenchContext): Promise<CaseReport>;
}

export type BenchCase = SharedCase | OwnCase;
