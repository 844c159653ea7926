/**
 * Admission on second sight for the search's kept answers and word hits (ADR 0065): most new
 * questions are asked once, and a kept entry for each lived some thousand questions before
 * it was pushed out, long enough to be promoted out of V8's young generation and collected
 * there again. A key is kept only when it was seen before; the first sight leaves a 32-bit
 * fingerprint in a fixed table, which retains nothing of the question.
 */
export class SecondSight {
  private readonly prints: Int32Array;
  private readonly mask: number;

  /** `slots`: a power of two; a key is remembered until another key takes its slot. */
  constructor(slots: number) {
    if (slots <= 0 || (slots & (slots - 1)) !== 0) throw new Error(`slots must be a power of two, got ${slots}`);
    this.prints = new Int32Array(slots);
    this.mask = slots - 1;
  }

  /**
   * True when the key was seen before (or another key with its fingerprint was: then it is
   * kept a sight early, which changes no answer, only what is held); else remembers it.
   */
  seenBefore(key: string): boolean {
    const h = fingerprint(key);
    const slot = h & this.mask;
    if (this.prints[slot] === h) return true;
    this.prints[slot] = h;
    return false;
  }
}

/**
 * FNV-1a over the UTF-16 code units, then MurmurHash3's finaliser so that keys differing in
 * their last characters (`p1234`, `p1235`) spread over the slots; never 0 (an empty slot).
 * Node's hashes (node:crypto) cost a native call and an object per key, more than the kept
 * answer saves on a short key.
 */
function fingerprint(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0 || 1;
}
