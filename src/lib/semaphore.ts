// A counting semaphore: at most `limit` tasks run at once; the rest wait their turn in order, those
// given with `behind: true` after every other waiting task.

export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly waitingBehind: (() => void)[] = [];

  constructor(private limit: number) {}

  /** Changes how many tasks may run at once (takes effect as slots free up). */
  setLimit(limit: number): void {
    this.limit = limit;
    this.next();
  }

  /** How many tasks wait for a slot in one line (0 while a slot is free). */
  waitingCount(behind = false): number {
    return (behind ? this.waitingBehind : this.waiting).length;
  }

  /** True when a task given now would start at once. */
  get hasFreeSlot(): boolean {
    return this.running < this.limit;
  }

  /** Runs `task` when a slot is free; with `behind`, only once no other task waits. */
  async run<T>(task: () => Promise<T>, behind = false): Promise<T> {
    await new Promise<void>((resolve) => {
      (behind ? this.waitingBehind : this.waiting).push(resolve);
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
