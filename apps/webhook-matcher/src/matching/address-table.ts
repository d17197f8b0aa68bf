/**
 * A hash map from a 20-byte EVM address to an int32 other than -1, in two typed arrays: each key is
 * five 32-bit words (20 bytes, not a 42-character string of ~64 bytes plus a Map entry), open
 * addressing with linear probing and backward-shift deletion (no tombstones). A million
 * addresses take 2^21 slots × 24 bytes = 48 MiB, against ~115–150 MiB as a Map of strings
 * (bench/README.md "## matcher"). Keys are `0x` + 40 hex digits in either case; anything else
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
  private capacity: number;
  private keys: Uint32Array;
  /** -1: empty slot; else the value. */
  private values: Int32Array;
  private count = 0;
  private filter: Uint32Array;
  private filterMask: number;
  private deletedSinceFilter = 0;
  private readonly words = new Uint32Array(5);
  /** One-entry cache: a block looks the same address up several times in a row. */
  private lastKey: string | undefined;
  private lastSlot = -1;

  constructor(initialCapacity = 1024) {
    this.capacity = 1 << Math.ceil(Math.log2(Math.max(16, initialCapacity)));
    this.keys = new Uint32Array(this.capacity * 5);
    this.values = new Int32Array(this.capacity).fill(-1);
    this.filterMask = this.capacity * FILTER_BITS_PER_SLOT - 1;
    this.filter = new Uint32Array((this.capacity * FILTER_BITS_PER_SLOT) >>> 5);
  }

  get size(): number {
    return this.count;
  }

  /** The value of `address`, or -1 when absent. */
  get(address: string): number {
    const slot = this.find(address);
    return slot < 0 ? -1 : this.values[slot]!;
  }

  has(address: string): boolean {
    return this.find(address) >= 0;
  }

  /** Sets the value (an int32, not -1) of `address`. */
  set(address: string, value: number): void {
    if (value !== (value | 0) || value === -1) throw new RangeError(`value ${value} out of range`);
    if (!this.parse(address)) throw new RangeError(`not an address: ${address}`);
    this.lastKey = undefined;
    if ((this.count + 1) * 4 > this.capacity * 3) {
      this.grow();
      this.parse(address);
    }
    const w = this.words;
    const mask = this.capacity - 1;
    for (let slot = this.hash() & mask; ; slot = (slot + 1) & mask) {
      if (this.values[slot] === -1) {
        this.keys.set(w, slot * 5);
        this.values[slot] = value;
        this.count += 1;
        const bit = w[4]! & 0x0fffffff & this.filterMask;
        this.filter[bit >>> 5]! |= 1 << (bit & 31);
        return;
      }
      if (this.sameKey(slot)) {
        this.values[slot] = value;
        return;
      }
    }
  }

  /** Removes `address`; false when it was absent. */
  delete(address: string): boolean {
    let hole = this.find(address);
    if (hole < 0) return false;
    this.lastKey = undefined;
    const mask = this.capacity - 1;
    // Backward-shift: move later entries of the probe run into the hole when their home slot
    // allows it, so lookups never need tombstones.
    for (let next = (hole + 1) & mask; this.values[next] !== -1; next = (next + 1) & mask) {
      const home = this.homeOf(next);
      const distanceNext = (next - home) & mask;
      const distanceHole = (hole - home) & mask;
      if (distanceHole <= distanceNext) {
        this.keys.copyWithin(hole * 5, next * 5, next * 5 + 5);
        this.values[hole] = this.values[next]!;
        hole = next;
      }
    }
    this.values[hole] = -1;
    this.count -= 1;
    if (++this.deletedSinceFilter > this.count / 2 + 1024) this.rebuildFilter();
    return true;
  }

  /** Every (address, value), the address as `0x` + 40 lower-case hex digits. */
  *entries(): Generator<[string, number]> {
    for (let slot = 0; slot < this.capacity; slot++) {
      const value = this.values[slot]!;
      if (value !== -1) yield [this.addressAt(slot), value];
    }
  }

  private addressAt(slot: number): string {
    let out = '0x';
    for (let i = 0; i < 5; i++) out += this.keys[slot * 5 + i]!.toString(16).padStart(8, '0');
    return out;
  }

  /** The slot holding `address`, or -1. */
  private find(address: string): number {
    if (address === this.lastKey) return this.lastSlot;
    let found = -1;
    if (this.mightHave(address) && this.parse(address)) {
      const mask = this.capacity - 1;
      for (let slot = this.hash() & mask; this.values[slot] !== -1; slot = (slot + 1) & mask)
        if (this.sameKey(slot)) {
          found = slot;
          break;
        }
    }
    this.lastKey = address;
    this.lastSlot = found;
    return found;
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

  private rebuildFilter(): void {
    this.filter.fill(0);
    for (let slot = 0; slot < this.capacity; slot++) {
      if (this.values[slot] === -1) continue;
      const bit = this.keys[slot * 5 + 4]! & 0x0fffffff & this.filterMask;
      this.filter[bit >>> 5]! |= 1 << (bit & 31);
    }
    this.deletedSinceFilter = 0;
  }

  private sameKey(slot: number): boolean {
    const k = this.keys;
    const w = this.words;
    const base = slot * 5;
    return (
      k[base] === w[0] &&
      k[base + 1] === w[1] &&
      k[base + 2] === w[2] &&
      k[base + 3] === w[3] &&
      k[base + 4] === w[4]
    );
  }

  /** All 160 bits mixed (vanity addresses share their leading words). */
  private hash(): number {
    return mix(this.words, 0);
  }

  private homeOf(slot: number): number {
    return mix(this.keys, slot * 5) & (this.capacity - 1);
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    const oldCapacity = this.capacity;
    this.capacity *= 2;
    this.keys = new Uint32Array(this.capacity * 5);
    this.values = new Int32Array(this.capacity).fill(-1);
    const mask = this.capacity - 1;
    for (let old = 0; old < oldCapacity; old++) {
      const value = oldValues[old]!;
      if (value === -1) continue;
      let slot = mix(oldKeys, old * 5) & mask;
      while (this.values[slot] !== -1) slot = (slot + 1) & mask;
      this.keys.set(oldKeys.subarray(old * 5, old * 5 + 5), slot * 5);
      this.values[slot] = value;
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
