import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/address.ts';
import { paymentReference, refundReference } from '../../machines/chain/reference.ts';
import { encodeSignedTx } from '../../machines/chain/tx.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { generateWallet, sign, type Wallet } from '../../runtime/chain/codec/keys.ts';
import { buildPaymentTx, buildRefundTx } from '../../runtime/chain/payment-tx.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { chainCmds, createModelIntent, finishChain, modelChain, useModelBackend, RUNS, seedsArb, shuffledWithDups, type ChainCmd } from '../helpers/chain-model.ts';
import { refundStoryProblems, storyOf } from '../helpers/webhook-story.ts';

/**
 * ADR 0033 (issue 27, the refund side of ADR 0016). The real indexer follows a devnet where a
 * settled payment is refunded; the refund transfer sinks, often past its 12 confirmations,
 * and random reorgs of depth 1 to 20 revert it (re-mined at the same height, at another, or
 * dropped), so a CONFIRMED refund is taken back and sometimes confirmed again. The refund's
 * signals are delivered through the real ActorHost in publish order and in random
 * permutations with duplicates, each to its own copy of the refund; each copy's outcomes
 * (`refund.confirmed` / `refund.reverted` / `refund.released`, numbered) are delivered to its
 * own copy of the intent, shuffled with duplicates too. Every copy must end where the chain is:
 *  - the refund CONFIRMED iff its transfer is canonical with >= 12 confirmations, CONFIRMING
 *    with the chain's depth while shallower, SUBMITTED while pending, REQUIRES_SIGNATURE once
 *    dropped, and the same state and transfer as the in-order delivery;
 *  - the intent counts the refund exactly when it is CONFIRMED and holds it otherwise, its
 *    status PARTIALLY_REFUNDED or PAID accordingly;
 *  - the merchant's facts balance: `refund.completed` and `refund.reorged` alternate and the
 *    last is a completion exactly when CONFIRMED (test/helpers/webhook-story.ts).
 */
const cmd: fc.Arbitrary<ChainCmd> = fc.oneof(chainCmds.mine, chainCmds.tick, chainCmds.reorg);

const HALF = '490000000';

describe('a confirmed refund reorged out, its signals and outcomes in any order (indexer + refund + intent, PGlite)', () => {
  const m = useModelBackend();

  const row = async (id: string) => (await m.b.db.query<{ state: string; snapshot: { context: Record<string, unknown> } }>(`SELECT state, snapshot FROM actors WHERE id = $1`, [id])).rows[0]!;
  const outcomesOf = async (refund: string) =>
    (await m.b.db.query<{ payload: { event: Record<string, unknown> & { type: string; id: string; at: number } } }>(`SELECT payload FROM outbox WHERE actor_id = $1 AND subject NOT LIKE 'fx.%' ORDER BY id`, [refund])).rows.map((r) => r.payload.event);

  /** A copy of the settled intent with a refund of HALF reserved, and that refund actor (not yet fed any chain signal). */
  async function copy(name: string, w: { merchant: Wallet; treasury: Wallet; payer: Wallet }, intentSignals: ActorEnvelope[], reference: string, payRef: string): Promise<{ intent: string; refund: string }> {
    const intent = `pay_${name}`;
    const refund = `re_${name}`;
    const now = Date.now();
    await createModelIntent(m.host, intent, payRef, w.merchant.address, w.treasury.address);
    for (const e of intentSignals) await m.host.apply({ kind: 'payment_intent', id: intent }, e.event);
    expect((await row(intent)).state).toBe('PAID');
    const create = { type: 'refund.create', id: `create:${refund}`, at: now, refund_id: refund, payment_intent: intent, merchant_id: 'm_test', mode: 'test', amount: HALF, chain_id: NETWORKS.test.chainId, from: w.merchant.address, to: w.payer.address, reference };
    expect((await m.host.apply({ kind: 'payment_intent', id: intent }, { type: 'refund.reserve', id: `reserve:${refund}`, at: now, refund_id: refund, amount: HALF, refund_create: create })).outcome).toBe('applied');
    await m.host.apply({ kind: 'refund', id: refund, merchant: 'm_test', mode: 'test' }, create);
    return { intent, refund };
  }


  async function scenario(sink: number, cmds: ChainCmd[], tail: number, seeds: number[]): Promise<void> {
    const { rpc, log, indexer, close } = await modelChain(m.b.db);
    try {
      const w = { merchant: generateWallet('test'), treasury: generateWallet('test'), payer: generateWallet('test') };
      await rpc.faucet(w.payer.address, 100_000_000_000n);
      await rpc.mine(22);
      const run = randomBytes(4).toString('hex');
      const payRef = paymentReference(randomBytes(20));
      const reference = refundReference(randomBytes(20));
      // The original intent and refund: the indexer matches the references to them.
      const original = await (async () => {
        const intent = `pay_sor_${run}`;
        await createModelIntent(m.host, intent, payRef, w.merchant.address, w.treasury.address);
        const nonce = await rpc.getNonce(w.payer.address, 'pending');
        const tx = buildPaymentTx(
          { id: intent, status: 'AWAITING_PAYMENT', network: 'test', payment_address: w.merchant.address, treasury_address: w.treasury.address, merchant_amount: 980_000_000n, protocol_fee: 20_000_000n, anm_amount: 1_000_000_000n, payment_reference: payRef, expires_at: null },
          { chainId: NETWORKS.test.chainId, publicKey: w.payer.publicKey, nonce },
        );
        await rpc.sendRawTransaction(encodeSignedTx(sign(tx, w.payer.secretKey)));
        await rpc.mine(13);
        await indexer.tick();
        return { intent, paidAt: (await rpc.blockNumber()) - 12 };
      })();
      const intentSignals = log.filter((e) => e.target.id === original.intent);
      const first = await copy(`sor_${run}`, w, intentSignals, reference, payRef);
      expect(first.intent).toBe(original.intent);

      // The refund transfer, signed by the merchant, sunk `sink` blocks (12 or more: CONFIRMED), then the random reorgs.
      const nonce = await rpc.getNonce(w.merchant.address, 'pending');
      const unsigned = buildRefundTx({ chain_id: NETWORKS.test.chainId, from: w.merchant.address, to: w.payer.address, amount: BigInt(HALF), reference }, { chainId: NETWORKS.test.chainId, publicKey: w.merchant.publicKey, nonce });
      const refundTx = await rpc.sendRawTransaction(encodeSignedTx(sign(unsigned, w.merchant.secretKey)));
      await indexer.tick();
      await rpc.mine(sink);
      await indexer.tick();
      for (const c of cmds) {
        if (c.k === 'mine') await rpc.mine(c.n);
        else if (c.k === 'reorg') {
          const head = await rpc.blockNumber();
          const receipt = await rpc.getTransactionReceipt(refundTx);
          // On the transfer: revert exactly down to its block, so it is re-mined at the same height.
          const depth = c.onTx && receipt ? head - receipt.block_height + 1 : c.depth;
          if (depth < 1 || depth > 20 || head - depth + 1 <= original.paidAt) continue; // never under the payment
          const removes = receipt !== null && receipt.block_height > head - depth;
          await rpc.reorg(depth, c.drop && removes ? [refundTx] : []);
        }
        await indexer.tick();
      }
      await finishChain(rpc, indexer, tail);

      // Where the chain says the refund is.
      const head = await rpc.blockNumber();
      const receipt = await rpc.getTransactionReceipt(refundTx);
      const pending = (await rpc.pendingTransactions()).some((t) => t.hash === refundTx);
      const depth = receipt ? head - receipt.block_height + 1 : 0;
      const chainSays = receipt ? (depth >= 12 ? 'CONFIRMED' : `CONFIRMING ${depth}`) : pending ? 'SUBMITTED' : 'REQUIRES_SIGNATURE';
      const signals = log.filter((e) => e.target.kind === 'refund');

      const check = async (c: { intent: string; refund: string }, label: string) => {
        const rf = await row(c.refund);
        const rctx = rf.snapshot.context as { tx_hash: string | null; confirmations: number };
        expect(rf.state === 'CONFIRMING' ? `CONFIRMING ${rctx.confirmations}` : rf.state, `${label}: the refund where the chain is`).toBe(chainSays);
        expect(rctx.tx_hash, `${label}: transfer`).toBe(chainSays === 'REQUIRES_SIGNATURE' ? null : refundTx);
        expect(refundStoryProblems(await storyOf(m.b.db, c.refund), rf.state, rctx.tx_hash), `${label}: facts`).toEqual([]);
        const ir = await row(c.intent);
        const ictx = ir.snapshot.context as unknown as PaymentIntentContext;
        const done = rf.state === 'CONFIRMED';
        expect([ir.state, ictx.refunds.map((r) => r.refund_id), (ictx.refund_holds ?? []).map((r) => r.refund_id)], `${label}: the intent's books`).toEqual(
          done ? ['PARTIALLY_REFUNDED', [c.refund], []] : ['PAID', [], [c.refund]],
        );
        return rf.state;
      };

      for (const e of signals) await m.host.apply({ kind: 'refund', id: first.refund }, e.event);
      for (const e of await outcomesOf(first.refund)) await m.host.apply({ kind: 'payment_intent', id: first.intent }, e);
      const inOrder = await check(first, 'in order');

      for (const [k, seed] of seeds.entries()) {
        const c = await copy(`sor_${run}_p${k}`, w, intentSignals, reference, payRef);
        for (const e of shuffledWithDups(signals, seed)) await m.host.apply({ kind: 'refund', id: c.refund }, e.event);
        for (const e of shuffledWithDups(await outcomesOf(c.refund), seed + 7)) await m.host.apply({ kind: 'payment_intent', id: c.intent }, e);
        expect(await check(c, `copy ${k} (seed ${seed})`)).toBe(inOrder);
      }
    } finally {
      await close();
    }
  }

  it('every delivery of a refund taken back by deep reorgs ends where the chain is', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 8, max: 16 }), fc.array(cmd, { minLength: 2, maxLength: 10 }), fc.integer({ min: 0, max: 14 }), seedsArb, scenario),
      {
        numRuns: RUNS,
        endOnFailure: true,
        // Confirmed 14 deep, the 14 blocks under it reverted and the transfer dropped; then confirmed 14 deep, reverted and re-mined at the same height.
        examples: [
          [14, [{ k: 'reorg', depth: 14, onTx: true, drop: true }], 3, [1, 2, 3]],
          [14, [{ k: 'reorg', depth: 14, onTx: true, drop: false }, { k: 'mine', n: 8 }], 6, [4, 5, 6]],
        ],
      },
    );
  }, 600_000);
});
