// A counting semaphore: at most `limit` tasks run at once; the rest wait their turn. Waiting tasks are
// served fairly by key (round-robin: each key with a task waiting gets one turn in every round, its
// own tasks in order), so one key's burst does not hold up another key's single task. Those given
// with `behind: true` wait in a second line, served only when the first is empty.

/** Where a task waits: its key (tasks without one share the key '') and its line. */
export interface Line {
  key?: string;
  behind?: boolean;
}

/** What a task given now would wait for (see `ahead`). */
export interface Ahead {
  /** Tasks of the same key waiting in its line: they run before it. */
  own: number;
  /** Tasks of other keys that would run before it: round-robin, plus the whole first line for a task behind. */
  others: number;
  /**
   * Turns of others before its key's first turn: one per other key waiting in its line, plus every
   * task of the first line for a task behind. What a single task of a new key waits for.
   */
  otherTurns: number;
}

/** Waiting tasks by key, served round-robin (a Map keeps its keys in the order they were added). */
class FairLine {
  private readonly byKey = new Map<string, (() => void)[]>();
  size = 0;

  push(key: string, start: () => void): void {
    const queue = this.byKey.get(key);
    if (queue) queue.push(start);
    else this.byKey.set(key, [start]);
    this.size += 1;
  }

  /** The next task: the first of the key whose turn it is; that key goes to the end of the round. */
  shift(): (() => void) | undefined {
    for (const [key, queue] of this.byKey) {
      this.byKey.delete(key);
      if (queue.length > 1) this.byKey.set(key, queue);
      this.size -= 1;
      return queue.shift();
    }
    return undefined;
  }

  /** What a new task of `key` would wait for in this line. */
  ahead(key: string): Ahead {
    const own = this.byKey.get(key)?.length ?? 0;
    let others = 0;
    // Each other key gets at most one turn per round before it (one more when it comes earlier in the round).
    for (const [other, queue] of this.byKey) if (other !== key) others += Math.min(queue.length, own + 1);
    return { own, others, otherTurns: this.byKey.size - (own > 0 ? 1 : 0) };
  }
}

export class Semaphore {
  private running = 0;
  private readonly waiting = new FairLine();
  private readonly waitingBehind = new FairLine();

  constructor(private limit: number) {}

  /** Changes how many tasks may run at once (takes effect as slots free up). */
  setLimit(limit: number): void {
    this.limit = limit;
    this.next();
  }

  /** How many tasks wait for a slot in one line (0 while a slot is free). */
  waitingCount(behind = false): number {
    return (behind ? this.waitingBehind : this.waiting).size;
  }

  /** What a task given now in `line` would wait for, once no slot is free. */
  ahead({ key = '', behind = false }: Line = {}): Ahead {
    if (!behind) return this.waiting.ahead(key);
    const inLine = this.waitingBehind.ahead(key);
    return { ...inLine, others: inLine.others + this.waiting.size, otherTurns: inLine.otherTurns + this.waiting.size };
  }

  /** True when a task given now would start at once. */
  get hasFreeSlot(): boolean {
    return this.running < this.limit;
  }

  /** Runs `task` when a slot is free and its turn has come. */
  async run<T>(task: () => Promise<T>, { key = '', behind = false }: Line = {}): Promise<T> {
    await new Promise<void>((resolve) => {
      (behind ? this.waitingBehind : this.waiting).push(key, resolve);
      this.next();
    });
    try {
      return await task();
    } finally {
      this.running -= 1;
      this.next();
    }
  }

  private next(): void {
    while (this.running < this.limit) {
      const start = this.waiting.shift() ?? this.waitingBehind.shift();
      if (start === undefined) return;
      this.running += 1;
      start();
    }
  }
}
