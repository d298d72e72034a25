// A hash map from a fixed-size tuple of 32-bit integers to a dense index: the frame table's (owner, ip high,
// ip low) and the stack table's (prefix, frame). A Map keyed by bigint or by a built string cost more than the
// rest of the table building together (a string per callchain entry); open addressing over one Int32Array
// keeps every key in place and allocates only when the table doubles.

export class IntTupleMap {
  /** keysPerEntry keys then the value, per slot; value -1 marks an empty slot. */
  private slots: Int32Array;
  private mask: number;
  private count = 0;

  constructor(
    private readonly keysPerEntry: number,
    initialCapacity = 1024,
  ) {
    let capacity = 16;
    while (capacity < initialCapacity * 2) capacity *= 2;
    this.mask = capacity - 1;
    this.slots = new Int32Array(capacity * (keysPerEntry + 1)).fill(-1);
  }

  get size(): number {
    return this.count;
  }

  /** The value of (a, b, c), or -1 when absent. Unused keys are passed as 0. */
  get(a: number, b: number, c: number): number {
    const stride = this.keysPerEntry + 1;
    let slot = hash3(a, b, c) & this.mask;
    for (;;) {
      const at = slot * stride;
      const value = this.slots[at + this.keysPerEntry];
      if (value === -1) return -1;
      if (this.slots[at] === a && this.slots[at + 1] === b && (this.keysPerEntry < 3 || this.slots[at + 2] === c)) return value;
      slot = (slot + 1) & this.mask;
    }
  }

  /**
   * Makes room for `entries` entries in all, rehashing once now instead of at every doubling on the way there (the
   * doublings of a map filled from empty cost as much as the filling).
   */
  reserve(entries: number): void {
    let capacity = this.mask + 1;
    while (entries * 2 > capacity) capacity *= 2;
    if (capacity > this.mask + 1) this.grow(capacity);
  }

  /** Stores `value` (≥ 0) for a key that get() did not find. */
  add(a: number, b: number, c: number, value: number): void {
    this.insert(a, b, c, value);
  }

  private insert(a: number, b: number, c: number, value: number): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const stride = this.keysPerEntry + 1;
    let slot = hash3(a, b, c) & this.mask;
    while (this.slots[slot * stride + this.keysPerEntry] !== -1) slot = (slot + 1) & this.mask;
    const at = slot * stride;
    this.slots[at] = a;
    this.slots[at + 1] = b;
    if (this.keysPerEntry >= 3) this.slots[at + 2] = c;
    this.slots[at + this.keysPerEntry] = value;
    this.count++;
  }

  private grow(capacity = (this.mask + 1) * 2): void {
    const stride = this.keysPerEntry + 1;
    const old = this.slots;
    this.slots = new Int32Array(capacity * stride).fill(-1);
    this.mask = capacity - 1;
    this.count = 0;
    for (let at = 0; at < old.length; at += stride) {
      const value = old[at + this.keysPerEntry];
      if (value !== -1) this.insert(old[at], old[at + 1], this.keysPerEntry >= 3 ? old[at + 2] : 0, value);
    }
  }
}

function hash3(a: number, b: number, c: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ b, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16) ^ c, 0x27d4eb2f);
  return (h ^ (h >>> 15)) >>> 0;
}
