import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/address.ts';
import { paymentReference, refundReference } from '../../machines/chain/reference.ts';
import { encodeSignedTx } from '../../machines/chain/tx.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { generateWallet, sign } from '../../runtime/chain/codec/keys.ts';
import { buildRefundTx } from '../../runtime/chain/payment-tx.ts';
import { realAvailable, waitFor } from '../helpers/backends.ts';
import { payIntent } from '../helpers/chain-harness.ts';
import { ChainServices, chainWorld, pause, sleep } from '../helpers/chain-services.ts';
import { intentStoryProblems, refundStoryProblems, storyOf } from '../helpers/webhook-story.ts';

/**
 * Issue 27, the refund side (ADR 0016 "Refund"): two service processes (engine + indexer +
 * chain router each) on real PostgreSQL + NATS follow one devnet. Each round settles a payment,
 * refunds all or half of it with a transfer the merchant signs, lets that transfer sink a
 * random number of blocks (CONFIRMING or already CONFIRMED), then reverts the blocks under it
 * while one or both processes are stopped (SIGSTOP) for random spans at random moments around
 * the reorg, as long GC pauses or a slow disk would; the devnet mines the transfer again at the
 * same height, at a lower one, or drops it, CONFIRMED or not (a reorg deeper than a completed
 * refund's confirmations takes it back, ADR 0033); then a random number of blocks follow.
 *
 * At the end every refund must be where the devnet is: CONFIRMED iff its transfer is canonical
 * with 12 confirmations, CONFIRMING with the chain's depth while shallower, REQUIRES_SIGNATURE
 * once the transfer was dropped. Every intent's refunded totals must agree with its refunds
 * (the confirmed ones counted, the open ones held, the state PAID / PARTIALLY_REFUNDED /
 * REFUNDED by the sum), and the facts of intents and refunds must tell that story
 * (test/helpers/webhook-story.ts).
 *
 * A confirmed refund whose transfer is dropped goes back to REQUIRES_SIGNATURE, the intent
 * un-counts it and holds its amount again, and the merchant gets `refund.reorged` after its
 * `refund.completed` (ADR 0033).
 *
 * CHAIN_REFUND_REORGS sets the rounds (8 by default); CHAIN_REFUND_SEED replays a run.
 */
const ROUNDS = Number(process.env.CHAIN_REFUND_REORGS ?? 8);
const SEED = Number(process.env.CHAIN_REFUND_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CAP = 980_000_000n; // merchant_amount of a 1 ANM payment: what a refund may return
const services = new ChainServices();
afterEach(() => services.stop());

/** mulberry32: a small seeded generator, so a failing run can be replayed with its seed. */
function rng(seed: number): (lo: number, hi: number) => number {
  let a = seed >>> 0;
  return (lo, hi) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return lo + Math.floor(r * (hi - lo + 1));
  };
}

interface Round {
  intent: string;
  payTx: string;
  refund: string;
  amount: bigint;
  tx: string;
}

describe.skipIf(!realAvailable)('refund transfers reorged under paused service processes (PostgreSQL + NATS)', () => {
  it(`${ROUNDS} reorgs of refund transfers leave every refund and intent where the devnet is (seed ${SEED})`, async () => {
    const rand = rng(SEED);
    const { b, rpc, host, treasury, payer, procs, state, close } = await chainWorld(services);
    try {
      const row = async (id: string) => (await b.db.query<{ state: string; snapshot: { context: Record<string, unknown> } }>(`SELECT state, snapshot FROM actors WHERE id = $1`, [id])).rows[0];
      const rounds: Round[] = [];

      for (let round = 0; round < ROUNDS; round++) {
        // A settled payment to a merchant of its own (refund nonces of one payout address stay independent of the other rounds').
        const merchant = generateWallet('test');
        const intent = `pay_rf_${round}_${randomBytes(3).toString('hex')}`;
        const now = Date.now();
        await host.apply(
          { kind: 'payment_intent', id: intent, merchant: 'm', mode: 'test' },
          { type: 'intent.create', id: `c:${intent}`, at: now, intent_id: intent, merchant_id: 'm', mode: 'test', currency: 'ANM', requested_amount: null, anm_amount: '1000000000', payment_address: merchant.address, treasury_address: treasury.address, payment_reference: paymentReference(randomBytes(20)), expires_at: now + 3_600_000 },
        );
        const payTx = await payIntent(b.db, rpc, intent, payer);
        await rpc.mine(13);
        await waitFor(async () => (await state(intent)) === 'PAID' || undefined, 30_000, `${intent} PAID`);

        // The refund, as the gateway makes it: reserve on the intent (which creates the refund through the outbox), and the create applied here too (deduped).
        const refund = `re_rf_${round}_${randomBytes(3).toString('hex')}`;
        const amount = rand(0, 1) === 0 ? CAP : CAP / 2n;
        const at = Date.now();
        const create = { type: 'refund.create', id: `c:${refund}`, at, refund_id: refund, payment_intent: intent, merchant_id: 'm', mode: 'test', amount: amount.toString(), chain_id: NETWORKS.test.chainId, from: merchant.address, to: payer.address, reference: refundReference(randomBytes(20)) };
        const reserved = await host.apply({ kind: 'payment_intent', id: intent }, { type: 'refund.reserve', id: `r:${refund}`, at, refund_id: refund, amount: amount.toString(), refund_create: create });
        expect(reserved.outcome).toBe('applied');
        await host.apply({ kind: 'refund', id: refund, merchant: 'm', mode: 'test' }, create);
        const nonce = await rpc.getNonce(merchant.address, 'pending');
        const unsigned = buildRefundTx({ chain_id: NETWORKS.test.chainId, from: merchant.address, to: payer.address, amount, reference: create.reference }, { chainId: NETWORKS.test.chainId, publicKey: merchant.publicKey, nonce });
        const tx = await rpc.sendRawTransaction(encodeSignedTx(sign(unsigned, merchant.secretKey)));
        rounds.push({ intent, payTx, refund, amount, tx });

        // Sink it 1 to 16 blocks: shallow (CONFIRMING) or settled (CONFIRMED).
        const sunk = [1, 3, 7, 11, 12, 14, 16][rand(0, 6)]!;
        await rpc.mine(sunk);
        const confirmed = sunk >= 12;
        await waitFor(async () => (await state(refund)) === (confirmed ? 'CONFIRMED' : 'CONFIRMING') || undefined, 30_000, `${refund} ${confirmed ? 'CONFIRMED' : 'CONFIRMING'}`);

        // The attack: revert the blocks under the transfer while one or both processes are stopped, at random moments.
        const mode = rand(0, 2); // 0: same height; 1: a lower height; 2: dropped
        const head = await rpc.blockNumber();
        const height = (await rpc.getTransactionReceipt(tx))!.block_height;
        const depth = head - height + 1 + (mode === 1 ? 2 : 0);
        const victims = rand(0, 2) === 2 ? procs : [procs[rand(0, 1)]!];
        // Drawn before anything waits, so a seed replays the same schedule.
        const plan = victims.map((p) => ({ p, after: rand(0, 300), for: rand(300, 1000) }));
        const reorgAfter = rand(0, 400);
        const pauses = plan.map(async (v) => {
          await sleep(v.after);
          await pause(v.p, v.for);
        });
        await sleep(reorgAfter);
        await rpc.reorg(depth, mode === 2 ? [tx] : []);
        await Promise.all(pauses);
        if (rand(0, 1) === 1) await rpc.mine(rand(1, 8));
      }

      await rpc.mine(1);
      // Where the devnet says each refund is.
      const expected = async () => {
        const head = await rpc.blockNumber();
        const pending = new Set((await rpc.pendingTransactions()).map((t) => t.hash));
        const out = new Map<string, string>();
        for (const r of rounds) {
          const receipt = await rpc.getTransactionReceipt(r.tx);
          const depth = receipt ? head - receipt.block_height + 1 : 0;
          // A CONFIRMING refund must also count the chain's confirmations.
          // The block too: a refund still CONFIRMED in the block the reorg removed is not in step
          // yet, only its reorg signal is late (it was still on its way when a state-only check passed).
          if (receipt) out.set(r.refund, receipt.status !== 'success' ? 'FAILED' : depth >= 12 ? `CONFIRMED in ${receipt.block_hash}` : `CONFIRMING ${depth} in ${receipt.block_hash}`);
          else out.set(r.refund, pending.has(r.tx) ? 'SUBMITTED' : 'REQUIRES_SIGNATURE');
        }
        return out;
      };
      const outOfStep = async () => {
        const want = await expected();
        const wrong: string[] = [];
        for (const r of rounds) {
          const rf = (await row(r.refund))!;
          const block = String(rf.snapshot.context.block_hash);
          const got = rf.state === 'CONFIRMING' ? `CONFIRMING ${String(rf.snapshot.context.confirmations)} in ${block}` : rf.state === 'CONFIRMED' ? `CONFIRMED in ${block}` : rf.state;
          if (got !== want.get(r.refund)) wrong.push(`${r.refund}: ${got}, chain says ${want.get(r.refund)}`);
        }
        return wrong;
      };
      await waitFor(async () => ((await outOfStep()).length === 0 ? true : undefined), 60_000, 'every refund in step with the devnet').catch(() => undefined);
      const wrong = await outOfStep();
      // What the refunds out of step heard, in the order they applied it, for the failure message.
      const heard = async (id: string) =>
        (await b.db.query<{ h: string }>(`SELECT seq || ' ' || (event->>'type') || ' pos=' || coalesce(event->>'pos', '-') || ' -> ' || state_after AS h FROM actor_events WHERE actor_id = $1 ORDER BY seq`, [id])).rows.map((r) => r.h);
      // Every event id the actor was handed, applied or ignored, in the order they were recorded.
      const handed = async (id: string) =>
        (await b.db.query<{ h: string }>(`SELECT to_char(at, 'HH24:MI:SS.MS') || ' ' || event_id || ' ' || outcome AS h FROM processed_events WHERE actor_id = $1 ORDER BY at`, [id])).rows.map((r) => r.h);
      const watched = async (id: string) =>
        (await b.db.query<{ h: string }>(`SELECT tx_hash || ' h=' || coalesce(block_height::text, '-') || ' ' || coalesce(left(block_hash, 12), '-') || ' inc=' || coalesce(inclusion_pos::text, '-') AS h FROM chain_watch WHERE actor_id = $1`, [id])).rows.map((r) => r.h);
      const chainRows = async () =>
        (await b.db.query<{ h: string }>(`SELECT height || ' ' || left(hash, 12) AS h FROM chain_blocks ORDER BY height DESC LIMIT 20`)).rows.map((r) => r.h).join(' | ');
      const detail = await Promise.all(
        wrong.map(async (w) => {
          const id = w.split(':')[0]!;
          return `${w}\n  ${(await heard(id)).join('\n  ')}\n handed:\n  ${(await handed(id)).join('\n  ')}\n watch: ${(await watched(id)).join('; ')}\n tx: ${JSON.stringify(await rpc.getTransactionReceipt(rounds.find((r) => r.refund === id)!.tx))}`;
        }),
      );
      const activity = async () =>
        (await b.db.query<{ h: string }>(`SELECT pid || ' ' || coalesce(state, '-') || ' ' || coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-') || ' xact ' || coalesce(to_char(xact_start, 'HH24:MI:SS.MS'), '-') || ' ' || left(query, 160) AS h FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`)).rows.map((r) => r.h);
      const leases = async () => (await b.db.query<{ h: string }>(`SELECT network || ' ' || holder || ' ' || to_char(expires_at, 'HH24:MI:SS.MS') AS h FROM chain_leases`)).rows.map((r) => r.h);
      if (wrong.length > 0) detail.push(`now ${new Date().toISOString()}`, `leases: ${(await leases()).join('; ')}`, `active:\n  ${(await activity()).join('\n  ')}`, `indexed: ${await chainRows()}`, `chain head ${await rpc.blockNumber()}`, ...procs.map((p, i) => `proc ${i} stderr: ${services.stderr.get(p) ?? ''}`));
      expect(wrong, `seed ${SEED}\n${detail.join('\n')}`).toEqual([]);

      // The intent hears of its refund's end through the refund's outbox, after the refund's own
      // step: give it the same time to follow before reading it.
      const intentsBehind = async () => {
        const behind: string[] = [];
        for (const r of rounds) {
          const done = (await row(r.refund))!.state === 'CONFIRMED';
          const counted = ((await row(r.intent))!.snapshot.context as unknown as PaymentIntentContext).refunds.some((x) => x.refund_id === r.refund);
          if (done !== counted) behind.push(r.intent);
        }
        return behind;
      };
      await waitFor(async () => ((await intentsBehind()).length === 0 ? true : undefined), 60_000, 'every intent following its refund').catch(() => undefined);
      for (const r of rounds) {
        const ir = (await row(r.intent))!;
        const ctx = ir.snapshot.context as unknown as PaymentIntentContext;
        const rf = (await row(r.refund))!;
        const done = rf.state === 'CONFIRMED';
        // The intent counts the confirmed refund, holds an open one, and its state follows the sum (DESIGN §4 "Refunds").
        expect(ctx.refunds.map((x) => [x.refund_id, x.amount]), `${r.intent} refunds`).toEqual(done ? [[r.refund, r.amount.toString()]] : []);
        expect((ctx.refund_holds ?? []).map((x) => [x.refund_id, x.amount]), `${r.intent} holds`).toEqual(done ? [] : [[r.refund, r.amount.toString()]]);
        expect(ir.state, `${r.intent} state`).toBe(!done ? 'PAID' : r.amount === CAP ? 'REFUNDED' : 'PARTIALLY_REFUNDED');
        const rctx = rf.snapshot.context as { tx_hash: string | null; confirmations: number };
        if (rf.state === 'CONFIRMING' || rf.state === 'CONFIRMED') expect(rctx.tx_hash).toBe(r.tx);
        if (rf.state === 'REQUIRES_SIGNATURE') expect(rctx.tx_hash).toBeNull();
        // The facts: the payment's story is untouched by its refund; the refund's says completed exactly when it is.
        expect(intentStoryProblems(await storyOf(b.db, r.intent), ir.state, r.payTx), `${r.intent} facts`).toEqual([]);
        const story = await storyOf(b.db, r.refund);
        const factsOf = story.facts.map((f) => `${f.seq}:${f.i} ${f.type} ${f.status ?? '-'}`).join('\n  ');
        expect(refundStoryProblems(story, rf.state, rctx.tx_hash), `${r.refund} facts (seed ${SEED})\n  ${factsOf}\nheard:\n  ${(await heard(r.refund)).join('\n  ')}`).toEqual([]);
      }
    } finally {
      await close();
    }
  }, Math.max(300_000, ROUNDS * 20_000));
});
