// Latencies in ms, kept in a growing Float64Array (a round at 1,000 req/s adds 10,000 numbers
// without 10,000 boxed values for the collector).
export class Latencies {
  values = new Float64Array(1 << 16);
  count = 0;
  add(ms: number) {
    if (this.count === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.count++] = ms;
  }
  taken(): Float64Array {
    return this.values.slice(0, this.count);
  }
  sorted(): Float64Array {
    return this.taken().sort();
  }
}
