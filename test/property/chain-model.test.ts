import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backendFactories } from '../helpers/backends.ts';
import { ChainHarness } from '../helpers/chain-harness.ts';

/**
 * Model-based suite over random schedules of payments, blocks, reorgs of random depth and
 * expiry against the real indexer + engine (devnet in-process). After every command, once the
 * indexer has caught up, the engine must agree with the chain's ground truth:
 *  - an intent is PAID iff its transaction is canonical, successful and >= 12 deep (rule 7);
 *  - the settled balance equals the sum the model expects;
 *  - every payment.confirmed is followed by a payment.reorged before any second one.
 */
type Cmd =
  | { kind: 'pay'; intent: number; legs: 'exact' | 'short' | 'over' }
  | { kind: 'mine'; n: number }
  | { kind: 'reorg'; depth: number; dropLast: boolean };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ kind: fc.constant('pay' as const), intent: fc.nat(3), legs: fc.constantFrom('exact' as const, 'exact' as const, 'short' as const, 'over' as const) }),
  fc.record({ kind: fc.constant('mine' as const), n: fc.integer({ min: 1, max: 13 }) }),
  fc.record({ kind: fc.constant('reorg' as const), depth: fc.integer({ min: 1, max: 14 }), dropLast: fc.boolean() }),
);

const [name, open] = backendFactories[0]!;
const TOTAL = { exact: undefined, short: 600_000_000n, over: 1_300_000_000n } as const;

describe(`chain model on ${name}`, () => {
  it('engine state matches the chain after every random schedule step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 3, maxLength: 9 }), async (cmds) => {
        const b = await open();
        const h = await ChainHarness.start(b);
        try {
          const intents = await Promise.all([0, 1, 2, 3].map(() => h.createIntent()));
          const payer = await h.customer(1_000_000_000_000n);
          const txOf = new Map<string, string>();
          for (const c of cmds) {
            if (c.kind === 'pay') {
              const id = intents[c.intent]!;
              const state = await h.state(id);
              if (state !== 'AWAITING_PAYMENT') continue; // one tx per intent while it is open
              txOf.set(id, await h.pay(id, payer, TOTAL[c.legs]));
            } else if (c.kind === 'mine') {
              await h.mine(c.n);
            } else {
              const head = await h.rpc.blockNumber();
              if (head < c.depth + 1) continue;
              const last = [...txOf.values()].at(-1);
              const r = last ? await h.rpc.getTransactionReceipt(last) : null;
              // The devnet can only drop a transaction from the blocks the reorg removes.
              const droppable = c.dropLast && last && r && r.block_height > head - c.depth;
              await h.rpc.reorg(c.depth, droppable ? [last] : []);
            }
            await h.settle();
            const head = await h.rpc.blockNumber();
            let expectedSettled = 0n;
            for (const id of intents) {
              const { state, ctx } = await h.context(id);
              const tx = txOf.get(id);
              const receipt = tx ? await h.rpc.getTransactionReceipt(tx) : null;
              const deep = receipt !== null && receipt.status === 'success' && head - receipt.block_height + 1 >= 12;
              const coversAmount = ctx.tx !== null && BigInt(ctx.tx.merchant_leg) >= BigInt(ctx.merchant_amount) && BigInt(ctx.tx.fee_leg) >= BigInt(ctx.protocol_fee);
              if (state === 'PAID') {
                expect(deep, `${id} PAID but its tx is not 12 deep`).toBe(true);
                expect(ctx.confirmations).toBeGreaterThanOrEqual(12);
                expectedSettled += BigInt(ctx.merchant_amount);
              }
              if (deep && coversAmount) expect(state).toBe('PAID');
              const types = await h.webhookTypes(id);
              let settled = false;
              for (const t of types) {
                if (t === 'payment.confirmed') {
                  expect(settled, `${id}: second payment.confirmed without a reorg`).toBe(false);
                  settled = true;
                }
                if (t === 'payment.reorged') settled = false;
              }
            }
            const { rows } = await b.db.query<{ s: string | null }>(
              `SELECT sum((snapshot->'context'->>'merchant_amount')::numeric)::text AS s FROM actors WHERE kind = 'payment_intent' AND state = 'PAID'`,
            );
            expect(BigInt(rows[0]!.s ?? '0')).toBe(expectedSettled);
          }
        } finally {
          await h.stop();
          await b.close();
        }
      }),
      { numRuns: Number(process.env.CHAIN_MODEL_RUNS ?? 8), endOnFailure: true },
    );
  }, 300_000);
});
