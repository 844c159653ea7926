import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { paymentReference } from '../../machines/chain/reference.ts';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { ChainIndexer } from '../../runtime/chain/indexer/indexer.ts';
import { LeaseLostError, reservePositions } from '../../runtime/chain/indexer/positions.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { payIntent } from '../helpers/chain-harness.ts';
import { leaseRunsOut, recordingBus, useEmbeddedChain } from '../helpers/hand-indexer.ts';

/**
 * Issue 27, ADR 0016 "Positions": the indexer's position stays monotone across what happens
 * to the process that issues it. A restart of the same holder, a takeover by another process
 * and the reorg path never issue a position at or below one already issued; a holder paused
 * past its lease (SIGSTOP, a long GC pause) can reserve none and publishes nothing, so it
 * cannot stamp stale facts with fresh numbers.
 */
describe('indexer positions across restarts, takeovers and reorgs (PGlite)', () => {
  const chain = useEmbeddedChain();

  it('every process issues only positions above all issued before it; a holder past its lease issues none', async () => {
    const merchant = generateWallet('test');
    const treasury = generateWallet('test');
    const payer = generateWallet('test');
    await chain.rpc.faucet(payer.address, 100_000_000_000n);
    await chain.rpc.mine(3);
    const now = Date.now();
    const intents = [0, 1, 2, 3].map((i) => `pay_pos_${i}_${randomBytes(3).toString('hex')}`);
    for (const id of intents) {
      await chain.host.apply(
        { kind: 'payment_intent', id, merchant: 'm', mode: 'test' },
        { type: 'intent.create', id: `c:${id}`, at: now, intent_id: id, merchant_id: 'm', mode: 'test', currency: 'ANM', requested_amount: null, anm_amount: '1000000000', payment_address: merchant.address, treasury_address: treasury.address, payment_reference: paymentReference(randomBytes(20)), expires_at: now + 3_600_000 },
      );
    }
    // Each segment is what one process published: its positions must all lie above every earlier segment's.
    const segments: Array<{ who: string; log: ActorEnvelope[] }> = [];
    const indexer = (who: string, holder: string) => {
      const log: ActorEnvelope[] = [];
      segments.push({ who, log });
      return new ChainIndexer({ network: 'test', rpc: chain.rpc, db: chain.b.db, bus: recordingBus(log), holder, startHeight: 0 });
    };
    /** A payment seen, included, deepened and reorged: every kind of signal, the reorg path included. */
    const churn = async (ix: ChainIndexer, id: string) => {
      const tx = await payIntent(chain.b.db, chain.rpc, id, payer);
      await ix.tick(); // seen
      await chain.rpc.mine(2);
      await ix.tick(); // included, depth
      await chain.rpc.reorg(2); // the same transfer again at the same height
      await ix.tick(); // reorged, included again
      await chain.rpc.mine(1);
      await ix.tick(); // depth
      return tx;
    };

    const first = indexer('first process', 'a');
    await churn(first, intents[0]!);
    await first.stop();
    const restarted = indexer('the same holder restarted', 'a');
    await churn(restarted, intents[1]!);
    await restarted.stop();
    // A holder that stops renewing (paused, not stopped): another takes over once its lease ran out.
    const paused = indexer('a holder then paused past its lease', 'p');
    await churn(paused, intents[2]!);
    await leaseRunsOut(chain.b.db, 'test', 'p');
    const takeover = indexer('the process that took over', 't');
    await churn(takeover, intents[3]!);
    // The paused holder resumes: it can reserve nothing, and its next pass publishes nothing.
    await expect(reservePositions(chain.b.db, 'test', 'p', 1)).rejects.toBeInstanceOf(LeaseLostError);
    const before = segments.find((s) => s.who.startsWith('a holder then paused'))!.log.length;
    await chain.rpc.mine(1);
    await paused.tick();
    expect(segments.find((s) => s.who.startsWith('a holder then paused'))!.log.length).toBe(before);
    await takeover.tick();
    await takeover.stop();

    let top = 0;
    for (const s of segments) {
      const pos = s.log.map((e) => Number(e.event.pos));
      expect(pos.length, `${s.who} published`).toBeGreaterThan(0);
      expect(pos.every(Number.isInteger), `${s.who}: every signal carries a position`).toBe(true);
      expect(Math.min(...pos), `${s.who}: lowest position vs the highest issued before it`).toBeGreaterThan(top);
      // Within a process, the reorg's statement is newer than the inclusion it retracts.
      for (const e of s.log.filter((x) => x.event.type === 'chain.reorged')) {
        const inc = s.log.filter((x) => x.event.type === 'chain.tx.included' && x.event.block_hash === e.event.block_hash);
        for (const i of inc) expect(Number(e.event.pos)).toBeGreaterThan(Number(i.event.pos));
      }
      top = Math.max(top, ...pos);
    }
    const { rows } = await chain.b.db.query<{ pos: string }>(`SELECT pos::text AS pos FROM chain_positions WHERE network = 'test'`);
    expect(Number(rows[0]!.pos)).toBeGreaterThanOrEqual(top);
    expect(segments.flatMap((s) => s.log).filter((e) => e.event.type === 'chain.reorged')).not.toHaveLength(0);
  }, 120_000);
});
