/**
 * A hash map from a 20-byte EVM address to an int32 other than -1, in typed arrays: entries are
 * dense (each key five 32-bit words — 20 bytes, not a 42-character string of ~64 bytes plus a
 * Map entry — and its value), found through a table of entry numbers with linear probing and
 * backward-shift deletion (no tombstones; a deleted entry's place takes the last one). A
 * million addresses take 2^20 × 24 bytes of entries + 2^21 × 4 bytes of table = 32 MiB, plus
 * the 4 MiB filter below (bench/README.md "## matcher"). Keys are `0x` + 40 hex digits in either case; anything else
 * is never present (`get` → -1) and refused by `set`.
 *
 * Most lookups are for addresses that are not there (a block's senders, recipients, tokens).
 * A bit per possible value of the last 7 hex digits (masked to 16 bits a slot: 2^25 bits,
 * 4 MiB, at a million addresses) answers most of them after reading 7 characters instead of
 * parsing 40 (the profile of the bench: the parse was the matcher's largest cost). Deleted
 * addresses leave their bit set (a false "maybe" costs a full lookup); the bits are rebuilt
 * when the table grows or deletions exceed half its size.
 */
export class AddressTable {
  /** Power of two; entry number per slot, -1 when empty. */
  private capacity: number;
  private slots: Int32Array;
  /** Dense entries 0..count-1: five key words each, and a value. */
  private keys: Uint32Array;
  private values: Int32Array;
  private count = 0;
  private filter: Uint32Array;
  private filterMask: number;
  private deletedSinceFilter = 0;
  private readonly words = new Uint32Array(5);
  /** One-entry cache: a block looks the same address up several times in a row. */
  private lastKey: string | undefined;
  private lastEntry = -1;

  constructor(initialCapacity = 1024) {
    this.capacity = 1 << Math.ceil(Math.log2(Math.max(16, initialCapacity)));
    this.slots = new Int32Array(this.capacity).fill(-1);
    this.keys = new Uint32Array((this.capacity / 2) * 5);
    this.values = new Int32Array(this.capacity / 2);
    this.filterMask = this.capacity * FILTER_BITS_PER_SLOT - 1;
    this.filter = new Uint32Array((this.capacity * FILTER_BITS_PER_SLOT) >>> 5);
  }

  get size(): number {
    return this.count;
  }

  /** The value of `address`, or -1 when absent. */
  get(address: string): number {
    const entry = this.find(address);
    return entry < 0 ? -1 : this.values[entry]!;
  }

  has(address: string): boolean {
    return this.find(address) >= 0;
  }

  /** Sets the value (an int32, not -1) of `address`. */
  set(address: string, value: number): void {
    if (value !== (value | 0) || value === -1) throw new RangeError(`value ${value} out of range`);
    if (!this.parse(address)) throw new RangeError(`not an address: ${address}`);
    this.lastKey = undefined;
    const mask = this.capacity - 1;
    let slot = mix(this.words, 0) & mask;
    for (let e = this.slots[slot]!; e !== -1; slot = (slot + 1) & mask, e = this.slots[slot]!)
      if (this.sameKey(e)) {
        this.values[e] = value;
        return;
      }
    if (this.count === this.values.length) this.growEntries();
    const entry = this.count++;
    this.keys.set(this.words, entry * 5);
    this.values[entry] = value;
    this.slots[slot] = entry;
    this.mark(entry);
    if (this.count * 4 > this.capacity * 3) this.growSlots();
  }

  /**
   * Makes room for `entries` entries at once, so a load that knows its size allocates each array
   * once instead of outgrowing (and leaving behind as garbage) every smaller one on the way.
   */
  reserve(entries: number): void {
    let capacity = this.capacity;
    while (entries * 4 > capacity * 3) capacity *= 2;
    if (capacity > this.capacity) this.resizeSlots(capacity);
    if (entries > this.values.length) this.resizeEntries(entries);
  }

  /** Removes `address`; false when it was absent. */
  delete(address: string): boolean {
    const entry = this.find(address);
    if (entry < 0) return false;
    this.lastKey = undefined;
    const mask = this.capacity - 1;
    let hole = this.slotOf(entry);
    // Backward-shift: move later entries of the probe run into the hole when their home slot
    // allows it, so lookups never need tombstones.
    for (let next = (hole + 1) & mask; this.slots[next] !== -1; next = (next + 1) & mask) {
      const home = mix(this.keys, this.slots[next]! * 5) & mask;
      if (((hole - home) & mask) <= ((next - home) & mask)) {
        this.slots[hole] = this.slots[next]!;
        hole = next;
      }
    }
    this.slots[hole] = -1;
    // The last entry takes the deleted one's place.
    const last = --this.count;
    if (entry !== last) {
      this.keys.copyWithin(entry * 5, last * 5, last * 5 + 5);
      this.values[entry] = this.values[last]!;
      this.slots[this.slotOf(last)] = entry;
    }
    if (++this.deletedSinceFilter > this.count / 2 + 1024) this.rebuildFilter();
    return true;
  }

  /** Every (address, value), the address as `0x` + 40 lower-case hex digits. */
  *entries(): Generator<[string, number]> {
    for (let entry = 0; entry < this.count; entry++)
      yield [this.addressAt(entry), this.values[entry]!];
  }

  private addressAt(entry: number): string {
    let out = '0x';
    for (let i = 0; i < 5; i++) out += this.keys[entry * 5 + i]!.toString(16).padStart(8, '0');
    return out;
  }

  /** The entry of `address`, or -1. */
  private find(address: string): number {
    if (address === this.lastKey) return this.lastEntry;
    let found = -1;
    if (this.mightHave(address) && this.parse(address)) {
      const mask = this.capacity - 1;
      for (
        let slot = mix(this.words, 0) & mask, e = this.slots[slot]!;
        e !== -1;
        slot = (slot + 1) & mask, e = this.slots[slot]!
      )
        if (this.sameKey(e)) {
          found = e;
          break;
        }
    }
    this.lastKey = address;
    this.lastEntry = found;
    return found;
  }

  /** The slot that holds entry `entry` (present). */
  private slotOf(entry: number): number {
    const mask = this.capacity - 1;
    let slot = mix(this.keys, entry * 5) & mask;
    while (this.slots[slot] !== entry) slot = (slot + 1) & mask;
    return slot;
  }

  /** False when `address` is surely absent: its last 7 hex digits' bit is not set. */
  private mightHave(address: string): boolean {
    if (address.length !== 42) return false;
    let v = 0;
    let bad = 0;
    for (let p = 35; p < 42; p++) {
      const c = address.charCodeAt(p);
      const d = HEX[c & 0xff]!;
      bad |= d | (c >>> 8);
      v = (v << 4) | (d & 15);
    }
    const bit = v & this.filterMask;
    return bad >= 0 && (this.filter[bit >>> 5]! & (1 << (bit & 31))) !== 0;
  }

  /** Reads `0x` + 40 hex digits into `words`; false when it is not that. */
  private parse(address: string): boolean {
    if (
      address.length !== 42 ||
      address.charCodeAt(0) !== 48 ||
      (address.charCodeAt(1) | 32) !== 120
    )
      return false;
    let bad = 0;
    for (let i = 0, p = 2; i < 5; i++) {
      let word = 0;
      for (const end = p + 8; p < end; p++) {
        const c = address.charCodeAt(p);
        const d = HEX[c & 0xff]!;
        bad |= d | (c >>> 8);
        word = (word << 4) | (d & 15);
      }
      this.words[i] = word;
    }
    return bad >= 0;
  }

  private mark(entry: number): void {
    const bit = this.keys[entry * 5 + 4]! & 0x0fffffff & this.filterMask;
    this.filter[bit >>> 5]! |= 1 << (bit & 31);
  }

  private rebuildFilter(): void {
    this.filter.fill(0);
    for (let entry = 0; entry < this.count; entry++) this.mark(entry);
    this.deletedSinceFilter = 0;
  }

  private sameKey(entry: number): boolean {
    const k = this.keys;
    const w = this.words;
    const base = entry * 5;
    return (
      k[base] === w[0] &&
      k[base + 1] === w[1] &&
      k[base + 2] === w[2] &&
      k[base + 3] === w[3] &&
      k[base + 4] === w[4]
    );
  }

  private growEntries(): void {
    this.resizeEntries(this.values.length * 2);
  }

  private resizeEntries(size: number): void {
    const keys = new Uint32Array(size * 5);
    keys.set(this.keys.subarray(0, this.count * 5));
    const values = new Int32Array(size);
    values.set(this.values.subarray(0, this.count));
    this.keys = keys;
    this.values = values;
  }

  private growSlots(): void {
    this.resizeSlots(this.capacity * 2);
  }

  private resizeSlots(capacity: number): void {
    this.capacity = capacity;
    this.slots = new Int32Array(this.capacity).fill(-1);
    const mask = this.capacity - 1;
    for (let entry = 0; entry < this.count; entry++) {
      let slot = mix(this.keys, entry * 5) & mask;
      while (this.slots[slot] !== -1) slot = (slot + 1) & mask;
      this.slots[slot] = entry;
    }
    this.filterMask = this.capacity * FILTER_BITS_PER_SLOT - 1;
    this.filter = new Uint32Array((this.capacity * FILTER_BITS_PER_SLOT) >>> 5);
    this.rebuildFilter();
  }
}

/** Filter bits per slot of the table (2^25 bits, 4 MiB, at a million addresses: ~3 % false "maybe"). */
const FILTER_BITS_PER_SLOT = 16;

/** Hex digit values by character code; -1 for anything else. */
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = HEX[65 + i] = 10 + i;

function mix(words: Uint32Array, base: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < 5; i++) {
    h = Math.imul(h ^ words[base + i]!, 0x9e3779b1);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
