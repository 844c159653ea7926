import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/address.ts';
import { paymentReference } from '../../machines/chain/reference.ts';
import { encodeSignedTx } from '../../machines/chain/tx.ts';
import { generateWallet, sign } from '../../runtime/chain/codec/keys.ts';
import { buildPaymentTx } from '../../runtime/chain/payment-tx.ts';
import { realAvailable, waitFor } from '../helpers/backends.ts';
import { ChainServices, chainWorld, sleep } from '../helpers/chain-services.ts';
import { intentStoryProblems, storyOf } from '../helpers/webhook-story.ts';

/**
 * Issue 27 end to end: two service processes (engine + indexer + chain router each) on real
 * PostgreSQL + NATS follow one devnet. Each round settles a payment, then reverts the blocks
 * under it while one process is paused by SIGSTOP (a long GC pause, a slow disk) and resumed
 * ~750 ms later; the devnet mines the same transfer again at the same height, at a lower one,
 * or drops it. At the end no intent may be out of step with the devnet: PAID exactly when its
 * transfer is canonical and 12 deep, AWAITING_PAYMENT when it was dropped, and the merchant's
 * books (payment.confirmed minus payment.reorged) say the same. CHAIN_REORGS sets the rounds.
 */
const ROUNDS = Number(process.env.CHAIN_REORGS ?? 12);
const services = new ChainServices();
afterEach(() => services.stop());

describe.skipIf(!realAvailable)('reorgs under two paused and resumed service processes (PostgreSQL + NATS)', () => {
  it(`${ROUNDS} reorgs of settled payments leave no intent out of step with the devnet`, async () => {
    const { b, rpc, host, treasury, payer, procs, state, close } = await chainWorld(services);
    try {
      const merchant = generateWallet('test');
      const intents: Array<{ id: string; tx: string }> = [];
      let paused = 0;

      for (let round = 0; round < ROUNDS; round++) {
        const id = `pay_e2e_${round}_${randomBytes(3).toString('hex')}`;
        const reference = paymentReference(randomBytes(20));
        const now = Date.now();
        await host.apply(
          { kind: 'payment_intent', id, merchant: 'm', mode: 'test' },
          { type: 'intent.create', id: `c:${id}`, at: now, intent_id: id, merchant_id: 'm', mode: 'test', currency: 'ANM', requested_amount: null, anm_amount: '1000000000', payment_address: merchant.address, treasury_address: treasury.address, payment_reference: reference, expires_at: now + 3_600_000 },
        );
        const nonce = await rpc.getNonce(payer.address, 'pending');
        const unsigned = buildPaymentTx(
          { id, status: 'AWAITING_PAYMENT', network: 'test', payment_address: merchant.address, treasury_address: treasury.address, merchant_amount: 980_000_000n, protocol_fee: 20_000_000n, anm_amount: 1_000_000_000n, payment_reference: reference, expires_at: null },
          { chainId: NETWORKS.test.chainId, publicKey: payer.publicKey, nonce },
        );
        const tx = await rpc.sendRawTransaction(encodeSignedTx(sign(unsigned, payer.secretKey)));
        intents.push({ id, tx });
        await rpc.mine(13);
        await waitFor(async () => (await state(id)) === 'PAID' || undefined, 30_000, `${id} PAID`);

        // The attack: revert the blocks under the settled payment while a process is stopped.
        const victim = procs[round % 2]!;
        victim.kill('SIGSTOP');
        paused += 1;
        const head = await rpc.blockNumber();
        const height = (await rpc.getTransactionReceipt(tx))!.block_height;
        const mode = round % 4; // 0, 1: same height; 2: a lower height; 3: dropped
        const depth = head - height + 1 + (mode === 2 ? 2 : 0);
        await rpc.reorg(depth, mode === 3 ? [tx] : []);
        await sleep(750);
        victim.kill('SIGCONT');
      }

      await rpc.mine(1);
      const expected = async () => {
        const chainHead = await rpc.blockNumber();
        const out: Record<string, string> = {};
        for (const i of intents) {
          const r = await rpc.getTransactionReceipt(i.tx);
          // The block too: an intent still PAID in the block the last reorg removed is not in
          // step yet, its reorg signal is only late (a state-only check passes before it lands).
          out[i.id] = r && r.status === 'success' && chainHead - r.block_height + 1 >= 12 ? `PAID in ${r.block_hash}` : r ? `CONFIRMING in ${r.block_hash}` : 'AWAITING_PAYMENT';
        }
        return out;
      };
      const outOfStep = async () => {
        const want = await expected();
        const wrong: string[] = [];
        for (const i of intents) {
          const row = (await b.db.query<{ state: string; block: string | null }>(`SELECT state, snapshot->'context'->'tx'->>'block_hash' AS block FROM actors WHERE id = $1`, [i.id])).rows[0];
          const got = row && (row.state === 'PAID' || row.state === 'CONFIRMING') ? `${row.state} in ${row.block}` : row?.state;
          if (got !== want[i.id]) wrong.push(`${i.id}: ${got}, chain says ${want[i.id]}`);
        }
        return wrong;
      };
      await waitFor(async () => ((await outOfStep()).length === 0 ? true : undefined), 60_000, 'every intent in step with the devnet').catch(() => undefined);
      expect(await outOfStep()).toEqual([]);
      expect(paused).toBe(ROUNDS);
      // The merchant's facts tell the chain's story (see webhook-story.ts). Exactly the same
      // sequence as a run without pauses cannot be asked: whether a payment.detected or a
      // payment.confirming precedes a confirmation depends on whether the indexer polled while
      // the transfer was in the mempool or shallow, which the pauses and the scheduler decide.
      for (const i of intents) {
        const final = (await state(i.id))!;
        expect(intentStoryProblems(await storyOf(b.db, i.id), final, i.tx), `${i.id} facts (${final})`).toEqual([]);
      }
    } finally {
      await close();
    }
  }, Math.max(300_000, ROUNDS * 15_000));
});
