// A counting semaphore: at most `limit` tasks run at once; the rest wait their turn in order.

export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private limit: number) {}

  /** Changes how many tasks may run at once (takes effect as slots free up). */
  setLimit(limit: number): void {
    this.limit = limit;
    this.next();
  }

  /** How many tasks wait for a slot (0 while a slot is free). */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** True when a task given now would start at once. */
  get hasFreeSlot(): boolean {
    return this.running < this.limit;
  }

  /** Runs `task` when a slot is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
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
    while (this.running < this.limit && this.waiting.length > 0) {
      this.running += 1;
      this.waiting.shift()!();
    }
  }
}
