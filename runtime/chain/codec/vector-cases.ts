/**
 * Inputs of the chain test vectors (test/vectors/chain.json). Shared by the generator
 * (gen-vectors.ts) and by docs/chain.md; machines/chain/vectors.test.ts only reads the JSON.
 */
export const seq = (n: number, start = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (start + i) & 0xff);

export const VECTOR_SEEDS = {
  payer: seq(32, 0x00), // 00 01 … 1f
  merchant: seq(32, 0x20), // 20 21 … 3f
  treasury: seq(32, 0x40), // 40 41 … 5f
};

export const VECTOR_REFERENCE_BYTES = seq(20, 0x00); // 00 01 … 13
