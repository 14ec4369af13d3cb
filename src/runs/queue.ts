// Background runs waiting for one of their user's slots (`queued`): first in, first out per user,
// at most RUN_QUEUE_PER_USER each. Only this process knows them: a restart ends them (failed,
// interrupted), as it ends the runs it was running.

/** A queued run: started when its turn comes. */
export interface QueuedRun {
  runId: string;
  start(): void;
}

export function createRunQueue(perUser: number) {
  const waiting = new Map<string, QueuedRun[]>();
  return {
    /** Adds `run` at the end of the user's queue; false when it is full. */
    add(userId: string, run: QueuedRun): boolean {
      const queue = waiting.get(userId) ?? [];
      if (queue.length >= perUser) return false;
      queue.push(run);
      waiting.set(userId, queue);
      return true;
    },
    /**
     * Puts `run` first in the user's queue, room or not: a run that was answered after waiting for
     * approval, not a new one (it goes on before the runs queued since).
     */
    addFirst(userId: string, run: QueuedRun): void {
      waiting.set(userId, [run, ...(waiting.get(userId) ?? [])]);
    },
    /** The user has room to queue one more. */
    hasRoom: (userId: string) => (waiting.get(userId)?.length ?? 0) < perUser,
    /** Takes the user's first queued run. */
    next(userId: string): QueuedRun | undefined {
      const queue = waiting.get(userId);
      const run = queue?.shift();
      if (queue && queue.length === 0) waiting.delete(userId);
      return run;
    },
    /** Takes the run out of its user's queue (cancelled); false when it was not queued here. */
    remove(userId: string, runId: string): boolean {
      const queue = waiting.get(userId);
      const at = queue?.findIndex((run) => run.runId === runId) ?? -1;
      if (!queue || at === -1) return false;
      queue.splice(at, 1);
      if (queue.length === 0) waiting.delete(userId);
      return true;
    },
    /** Empties the user's queue (the account is deleted or disabled); answers the run ids that were waiting. */
    removeUser(userId: string): string[] {
      const ids = (waiting.get(userId) ?? []).map((run) => run.runId);
      waiting.delete(userId);
      return ids;
    },
    /** Empties every queue (shutdown); answers the run ids that were waiting. */
    drain(): string[] {
      const ids = [...waiting.values()].flat().map((run) => run.runId);
      waiting.clear();
      return ids;
    },
  };
}
