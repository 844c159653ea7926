import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/address.ts';
import { paymentReference } from '../../machines/chain/reference.ts';
import { encodeSignedTx } from '../../machines/chain/tx.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { generateWallet, sign } from '../../runtime/chain/codec/keys.ts';
import { buildPaymentTx } from '../../runtime/chain/payment-tx.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { chainCmds, createModelIntent, finishChain, modelChain, useModelBackend, RUNS, seedsArb, type ChainCmd } from '../helpers/chain-model.ts';
import { intentStoryProblems, storyOf } from '../helpers/webhook-story.ts';

/**
 * DESIGN §2 "Signals in any order", issue 27, ADR 0016. The real indexer follows a devnet
 * through random payments, blocks and reorgs (depth 1 to 20; the paying transaction re-mined
 * at the same height, at another, or dropped); its signals are recorded, then delivered
 * through the real ActorHost once in publish order and several times in a random permutation
 * with random duplicates, each to its own copy of the intent. Every delivery must end where
 * the chain is and where the in-order delivery ends:
 *  - the same state, transaction hash and confirmations;
 *  - PAID iff the transaction is canonical with >= 12 confirmations; CONFIRMING with the
 *    chain's depth while canonical and shallower; neither while off the chain;
 *  - webhook facts (type, transaction): every fact a shuffled delivery sends, the in-order
 *    one sent too (nothing the chain never did), and the merchant's books balance in both:
 *    confirmations minus reorgs is 1 exactly when PAID, and never above 1; each step's last
 *    fact says the state the step ended in, and the last fact the final state
 *    (test/helpers/webhook-story.ts).
 * A refund (ADR 0023): copies that settle in order, reserve half the cap at the first PAID,
 * then get the rest of the signals shuffled with duplicates and the refund's `refund.confirmed`
 * (sent once by the refund actor) last (it confirms 12 blocks after its transfer) or at a
 * random place among them, so often while a reorg has the payment reopened. The refund must be counted once, its hold gone, and the copy end
 * where the in-order delivery ends, PARTIALLY_REFUNDED in place of PAID.
 * The permutations cannot send exactly the same facts: a delivery that hears the final
 * inclusion first never learns of a `payment.detected` or of a settlement the chain undid
 * meanwhile, and tells the merchant nothing about them.
 */
type Cmd = { k: 'pay'; intent: number } | ChainCmd;

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ k: fc.constant('pay' as const), intent: fc.nat(1) }) },
  chainCmds.mine,
  chainCmds.tick,
  chainCmds.reorg,
);

interface Outcome {
  state: string;
  ctx: PaymentIntentContext;
  facts: Array<{ type: string; tx: string | null }>;
}

/** Half of the intent's cap (merchant_amount 980000000 nANM). */
const HALF = '490000000';

describe('chain signals in any order (indexer + payment intent, PGlite)', () => {
  const m = useModelBackend();

  const createIntent = (id: string, reference: string, merchant: string, treasury: string) => createModelIntent(m.host, id, reference, merchant, treasury);

  async function outcome(id: string): Promise<Outcome> {
    const { rows } = await m.b.db.query<{ state: string; snapshot: { context: PaymentIntentContext } }>(`SELECT state, snapshot FROM actors WHERE id = $1`, [id]);
    const hooks = await m.b.db.query<{ t: string; tx: string | null }>(
      `SELECT payload->'event'->>'type' AS t, payload->'event'->'data'->>'transaction_hash' AS tx FROM outbox WHERE actor_id = $1 AND subject LIKE 'fx.webhook.%' ORDER BY id`,
      [id],
    );
    return { state: rows[0]!.state, ctx: rows[0]!.snapshot.context, facts: hooks.rows.filter((r) => r.t !== 'payment.created').map((r) => ({ type: r.t, tx: r.tx })) };
  }

  function books(o: Outcome, label: string): void {
    let settled = 0;
    for (const f of o.facts) {
      if (f.type === 'payment.confirmed') settled += 1;
      if (f.type === 'payment.reorged') settled -= 1;
      expect(settled, `${label}: payment.confirmed twice without a reorg between`).toBeLessThanOrEqual(1);
      expect(settled, `${label}: payment.reorged without a settlement`).toBeGreaterThanOrEqual(0);
    }
    expect(settled === 1, `${label}: books say ${settled}, state ${o.state}`).toBe(o.state === 'PAID');
  }

  /** ADR 0023: the refund case above, on its own copy of the intent; null when the intent never settled. */
  async function refundCopy(copy: string, it: { reference: string }, mine: ActorEnvelope[], seed: number, last: boolean, wallets: { merchant: string; treasury: string }): Promise<Outcome | null> {
    const target = { kind: 'payment_intent', id: copy };
    await createIntent(copy, it.reference, wallets.merchant, wallets.treasury);
    const settledAt = await (async () => {
      for (const [i, e] of mine.entries()) if ((await m.host.apply(target, e.event)).status === 'PAID') return i;
      return -1;
    })();
    if (settledAt < 0) return null;
    const rid = `re_${copy}`;
    const at = Date.now();
    const reserved = await m.host.apply(target, { type: 'refund.reserve', id: `reserve:${rid}`, at, refund_id: rid, amount: HALF, refund_create: { type: 'refund.create', id: `create:${rid}`, at } });
    expect(reserved.outcome).toBe('applied');
    const rest = mine.slice(settledAt + 1).map((e) => e.event);
    const dups = fc.sample(fc.subarray(rest), { numRuns: 1, seed })[0]!;
    const all = [...rest, ...dups];
    const shuffled = fc.sample(fc.shuffledSubarray(all, { minLength: all.length }), { numRuns: 1, seed: seed + 1 })[0]!;
    const where = last ? shuffled.length : fc.sample(fc.nat(shuffled.length), { numRuns: 1, seed: seed + 2 })[0]!;
    shuffled.splice(where, 0, { type: 'refund.confirmed', id: `refund.confirmed:${rid}`, at, refund_id: rid, amount: HALF });
    for (const e of shuffled) await m.host.apply(target, e);
    return outcome(copy);
  }

  async function scenario(cmds: Cmd[], tail: number, seeds: number[]): Promise<void> {
    const { rpc, log, indexer, close } = await modelChain(m.b.db);
    try {
      const merchant = generateWallet('test');
      const treasury = generateWallet('test');
      const payer = generateWallet('test');
      await rpc.faucet(payer.address, 100_000_000_000n);
      await rpc.mine(22);
      const run = randomBytes(4).toString('hex');
      const intents = [0, 1].map((i) => ({ id: `pay_so_${run}_${i}`, reference: paymentReference(randomBytes(20)), tx: null as string | null }));
      for (const it of intents) await createIntent(it.id, it.reference, merchant.address, treasury.address);
      await indexer.tick();
      for (const c of cmds) {
        if (c.k === 'pay') {
          const it = intents[c.intent]!;
          if (it.tx) continue; // one transaction per intent
          const nonce = await rpc.getNonce(payer.address, 'pending');
          const tx = buildPaymentTx(
            { id: it.id, status: 'AWAITING_PAYMENT', network: 'test', payment_address: merchant.address, treasury_address: treasury.address, merchant_amount: 980_000_000n, protocol_fee: 20_000_000n, anm_amount: 1_000_000_000n, payment_reference: it.reference, expires_at: null },
            { chainId: NETWORKS.test.chainId, publicKey: payer.publicKey, nonce },
          );
          it.tx = await rpc.sendRawTransaction(encodeSignedTx(sign(tx, payer.secretKey)));
        } else if (c.k === 'mine') {
          await rpc.mine(c.n);
        } else if (c.k === 'reorg') {
          const head = await rpc.blockNumber();
          const paid = intents.filter((i) => i.tx);
          const target = paid.at(-1)?.tx;
          const receipt = target ? await rpc.getTransactionReceipt(target) : null;
          // On the transaction: revert exactly down to its block, so it is re-mined at the same height.
          const depth = c.onTx && receipt ? head - receipt.block_height + 1 : c.depth;
          if (depth < 1 || depth > 20 || depth >= head) continue;
          const removes = receipt !== null && receipt.block_height > head - depth;
          await rpc.reorg(depth, c.drop && removes && target ? [target] : []);
        }
        await indexer.tick();
      }
      await finishChain(rpc, indexer, tail);
      const head = await rpc.blockNumber();

      for (const it of intents) {
        const mine = log.filter((e) => e.target.id === it.id);
        for (const e of mine) await m.host.apply({ kind: 'payment_intent', id: it.id }, e.event);
        const inOrder = await outcome(it.id);
        books(inOrder, `${it.id} in order`);
        expect(intentStoryProblems(await storyOf(m.b.db, it.id), inOrder.state, it.tx ?? ''), `${it.id} in order: facts`).toEqual([]);
        const receipt = it.tx ? await rpc.getTransactionReceipt(it.tx) : null;
        const depth = receipt ? head - receipt.block_height + 1 : 0;
        expect(inOrder.state === 'PAID', `${it.id}: PAID iff canonical and 12 deep (depth ${depth})`).toBe(receipt !== null && depth >= 12);
        if (receipt && depth < 12) expect([inOrder.state, inOrder.ctx.confirmations]).toEqual(['CONFIRMING', depth]);
        if (!receipt) expect(['AWAITING_PAYMENT', 'PAYMENT_DETECTED']).toContain(inOrder.state);
        const inOrderFacts = new Set(inOrder.facts.map((f) => `${f.type}:${f.tx}`));

        for (const [k, seed] of seeds.entries()) {
          const copy = `${it.id}_p${k}`;
          await createIntent(copy, it.reference, merchant.address, treasury.address);
          const dups = fc.sample(fc.subarray(mine), { numRuns: 1, seed })[0]!;
          const all = [...mine, ...dups];
          const full = fc.sample(fc.shuffledSubarray(all, { minLength: all.length }), { numRuns: 1, seed: seed + 1 })[0]!;
          for (const e of full) await m.host.apply({ kind: 'payment_intent', id: copy }, e.event);
          const got = await outcome(copy);
          const label = `${copy} (seed ${seed}, ${full.length} deliveries)`;
          expect([got.state, got.ctx.tx?.hash ?? null, got.ctx.confirmations], label).toEqual([inOrder.state, inOrder.ctx.tx?.hash ?? null, inOrder.ctx.confirmations]);
          books(got, label);
          expect(intentStoryProblems(await storyOf(m.b.db, copy), got.state, it.tx ?? ''), `${label}: facts`).toEqual([]);
          for (const f of got.facts) expect(inOrderFacts.has(`${f.type}:${f.tx}`), `${label}: ${f.type} never sent in order`).toBe(true);

          const refunded = await refundCopy(`${it.id}_r${k}`, it, mine, seed, k === 0, { merchant: merchant.address, treasury: treasury.address });
          if (!refunded) continue;
          const rLabel = `${it.id}_r${k} (seed ${seed}): refund confirmed while ${inOrder.state === 'PAID' ? 'settled or reorged' : 'reorged'}`;
          const expected = inOrder.state === 'PAID' ? 'PARTIALLY_REFUNDED' : inOrder.state;
          expect([refunded.state, refunded.ctx.tx?.hash ?? null, refunded.ctx.confirmations], rLabel).toEqual([expected, inOrder.ctx.tx?.hash ?? null, inOrder.ctx.confirmations]);
          expect([refunded.ctx.refunds.map((r) => r.amount), refunded.ctx.refund_holds], `${rLabel}: counted once, hold gone`).toEqual([[HALF], []]);
          const net = refunded.facts.reduce((n, f) => n + (f.type === 'payment.confirmed' ? 1 : f.type === 'payment.reorged' ? -1 : 0), 0);
          expect(net === 1, `${rLabel}: books say ${net}`).toBe(refunded.state === 'PARTIALLY_REFUNDED');
        }
      }
    } finally {
      await close();
    }
  }

  it('every permutation with duplicates ends where the chain and the in-order delivery end', async () => {
    await fc.assert(fc.asyncProperty(fc.array(cmd, { minLength: 4, maxLength: 14 }), fc.integer({ min: 0, max: 14 }), seedsArb, scenario), { numRuns: RUNS, endOnFailure: true });
  }, 600_000);

  // ADR 0023: a payment that settles first, so the reorgs that follow reopen a settled intent with a refund in flight.
  it('a refund confirmed around the reorgs of its settled payment is counted once, whatever the order', async () => {
    const settledFirst: Cmd[] = [{ k: 'pay', intent: 0 }, { k: 'mine', n: 8 }, { k: 'mine', n: 8 }];
    await fc.assert(fc.asyncProperty(fc.array(cmd, { minLength: 2, maxLength: 10 }).map((c) => [...settledFirst, ...c]), fc.integer({ min: 0, max: 14 }), seedsArb, scenario), { numRuns: RUNS, endOnFailure: true });
  }, 600_000);
});
