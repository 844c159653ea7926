/** The hand-written full-block check agrees with the zod schema (rpc-types.ts `fullBlockWire`). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFullBlock } from './rpc-fast-parse.ts';
import { fullBlockWire } from './rpc-types.ts';

const schema = fullBlockWire.nullable();
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const decimal = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String), fc.constantFrom('0', '18446744073709551615', '18446744073709551616', '01', '-1', '1e3', ''));
const count = fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN));
const tx = fc.record({
  hash: fc.oneof(hex64, fc.constant('AB')),
  chain_id: fc.oneof(fc.integer(), fc.constant(1.5)),
  from: fc.oneof(fc.string(), fc.constant(7)),
  nonce: decimal,
  outputs: fc.array(fc.record({ to: fc.string(), amount: decimal }), { maxLength: 3 }),
  reference: fc.string(),
  fee: decimal,
  tx_index: count,
  status: fc.constantFrom('success', 'failed', 'pending'),
  extra: fc.option(fc.string(), { nil: undefined }),
});
const block = fc.record({
  height: count,
  hash: hex64,
  parent_hash: fc.oneof(hex64, fc.constant('')),
  timestamp: count,
  serial: count,
  tx_root: hex64,
  transactions: fc.array(tx, { maxLength: 4 }),
});

describe('parseFullBlock', () => {
  it('accepts only what the schema accepts, with the same output', () => {
    fc.assert(
      fc.property(fc.oneof(block, fc.constant(null), fc.anything()), (v) => {
        const fast = parseFullBlock(v);
        const slow = schema.safeParse(v);
        if (fast !== undefined) expect(slow).toEqual({ success: true, data: fast });
      }),
      { numRuns: 2_000 },
    );
  });

  it('accepts every well-formed block outright', () => {
    const wellFormed = fc.record({
      height: fc.nat(),
      hash: hex64,
      parent_hash: hex64,
      timestamp: fc.nat(),
      serial: fc.nat(),
      tx_root: hex64,
      transactions: fc.array(
        fc.record({
          hash: hex64,
          chain_id: fc.integer(),
          from: fc.string(),
          nonce: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
          outputs: fc.array(fc.record({ to: fc.string(), amount: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String) }), { maxLength: 3 }),
          reference: fc.string(),
          fee: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
          tx_index: fc.nat(),
          status: fc.constantFrom('success', 'failed'),
        }),
        { maxLength: 4 },
      ),
    });
    fc.assert(
      fc.property(wellFormed, (v) => {
        expect(parseFullBlock(v)).toEqual(schema.parse(v));
      }),
      { numRuns: 500 },
    );
  });
});
