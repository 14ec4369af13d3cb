// Who may run now. A run is admitted before its checks and stays admitted until it ended: its
// signal (aborted at its deadline, by a shutdown, or with its parent) and, for a top-level run, one
// of its user's RUN_CONCURRENCY_PER_USER slots. A shutdown refuses new runs, stops every admitted
// one wherever it is (checking its endpoint, recorded but not yet running, mid-answer) and waits
// until each has ended — so none is left `running` or with its stream open. The runs of one user
// are stopped the same way when the account is deleted or disabled.
import { RunAbort, RunFailure, shuttingDown } from './failures.js';

/** One admitted run. */
export interface Admission {
  /** Aborted with a RunAbort: at the deadline, at shutdown, when the parent stops or `abort` is called. */
  readonly signal: AbortSignal;
  /** ms since epoch when the run (and any run it starts) must have ended. */
  readonly deadline: number;
  abort(reason: RunAbort): void;
  /**
   * Gives the user's slot back while the run still finishes (its end is recorded, only the disk is
   * still to confirm it); it stays admitted until `release`. Safe to call more than once.
   */
  freeSlot(): void;
  /** Ends the admission: frees the slot, stops the deadline timer. Safe to call more than once. */
  release(): void;
}

export type RunSlots = ReturnType<typeof createRunSlots>;

/**
 * `onFree` is told when a user's slot is given back (the engine then starts that user's next
 * queued run, if any).
 */
export function createRunSlots(perUser: number, onFree: (userId: string) => void = () => {}) {
  const running = new Map<string, number>();
  const admitted = new Set<{ controller: AbortController; done: Promise<void>; owner: string | undefined }>();
  // The user each admitted run's signal runs for (a nested run's is its parent's user).
  const owners = new WeakMap<AbortSignal, string>();
  let closing = false;

  /**
   * Admits a run: `userId` takes one of that user's slots (a nested run passes null: it runs in its
   * parent's), `parent` is the signal of the run that started it. Throws a RunFailure when the user
   * has no slot left or the service is shutting down.
   */
  function admit(userId: string | null, deadline: number, parent?: AbortSignal): Admission {
    if (closing) throw shuttingDown();
    if (userId !== null) {
      const count = running.get(userId) ?? 0;
      if (count >= perUser) throw new RunFailure('rate_limited', `Too many runs at once (at most ${perUser} per user); retry after 1 s.`);
      running.set(userId, count + 1);
    }
    const controller = new AbortController();
    let settle!: () => void;
    const owner = userId ?? (parent ? owners.get(parent) : undefined);
    const entry = { controller, done: new Promise<void>((resolve) => (settle = resolve)), owner };
    admitted.add(entry);
    if (owner !== undefined) owners.set(controller.signal, owner);
    const timer = setTimeout(() => controller.abort(new RunAbort('timeout')), Math.max(0, deadline - Date.now()));
    const onParentAbort = () => controller.abort(parent!.reason);
    parent?.addEventListener('abort', onParentAbort, { once: true });
    if (parent?.aborted) onParentAbort();
    let released = false;
    let freed = userId === null;
    const freeSlot = () => {
      if (freed || userId === null) return;
      freed = true;
      const left = (running.get(userId) ?? 1) - 1;
      if (left <= 0) running.delete(userId);
      else running.set(userId, left);
      if (!closing) onFree(userId);
    };
    return {
      signal: controller.signal,
      deadline,
      abort: (reason) => controller.abort(reason),
      freeSlot,
      release() {
        if (released) return;
        released = true;
        clearTimeout(timer);
        parent?.removeEventListener('abort', onParentAbort);
        admitted.delete(entry);
        settle();
        freeSlot();
      },
    };
  }

  return {
    admit,
    /** The user may start a run now (a slot is free and the service is not shutting down). */
    hasRoom: (userId: string) => !closing && (running.get(userId) ?? 0) < perUser,
    /** The service is shutting down. */
    get closing() {
      return closing;
    },
    /** The user an admitted run's `signal` runs for (a nested run: its top-level run's user). */
    ownerOf: (signal: AbortSignal): string | undefined => owners.get(signal),
    /** Stops every admitted run of the user (its nested runs with it) with `reason`, wherever it is. */
    stopUser(userId: string, reason: RunAbort): void {
      for (const entry of [...admitted]) if (entry.owner === userId) entry.controller.abort(reason);
    },
    /** Refuses new runs, stops every admitted one and resolves once all have ended. */
    async shutdown(): Promise<void> {
      closing = true;
      const all = [...admitted];
      for (const entry of all) entry.controller.abort(new RunAbort('shutdown'));
      await Promise.all(all.map((entry) => entry.done));
    },
  };
}
