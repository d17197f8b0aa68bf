/**
 * What the worker derives per endpoint or secret and keeps (a parsed target URL, an opened
 * signing secret): computed on first use, forgotten all at once when `max` keys are held. No
 * recency bookkeeping on a hit, so a hit on the delivery loop costs one Map lookup.
 */
export class BoundedMemo<V> {
  private readonly values = new Map<string, V>();

  constructor(private readonly max: number) {}

  get(key: string, compute: (key: string) => V): V {
    let value = this.values.get(key);
    if (value === undefined) {
      value = compute(key);
      if (this.values.size >= this.max) this.values.clear();
      this.values.set(key, value);
    }
    return value;
  }
}
