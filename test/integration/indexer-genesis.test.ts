import { machineRegistry } from '../../runtime/machines.ts';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/address.ts';
import { paymentReference } from '../../machines/chain/reference.ts';
import { encodeSignedTx } from '../../machines/chain/tx.ts';
import type { Bus } from '../../runtime/bus/types.ts';
import { generateWallet, sign } from '../../runtime/chain/codec/keys.ts';
import { startDevnetServer, type DevnetServer } from '../../runtime/chain/devnet/server.ts';
import { ChainIndexer, DifferentChainError } from '../../runtime/chain/indexer/indexer.ts';
import { signalEnvelopes } from '../../runtime/chain/indexer/signals.ts';
import { buildPaymentTx } from '../../runtime/chain/payment-tx.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { openEmbedded, type Backend } from '../helpers/backends.ts';

/**
 * DESIGN §3 (issue 19): a node that comes back with a different genesis, lower or higher, is
 * a different chain, not a reorg of ours. The indexer stops following it, says why, publishes
 * nothing, and every settlement stands.
 */
describe('indexer facing a different chain', () => {
  let b: Backend;
  let first: DevnetServer;
  let second: DevnetServer | undefined;
  beforeAll(async () => {
    b = await openEmbedded();
  }, 120_000);
  afterAll(async () => {
    await second?.close();
    await first?.close().catch(() => undefined);
    await b?.close();
  });

  it('a node that restarted empty (new genesis, lower head) is refused; the PAID intent stays PAID', async () => {
    const host = new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() });
    const log: ActorEnvelope[] = [];
    const bus = { publish: async (subject: string, data: unknown) => void log.push(...signalEnvelopes(subject, data)) } as unknown as Bus;
    first = await startDevnetServer({ port: 0, blockMs: 0 });
    const rpc = new AnmRpcClient(`${first.url}/test`);
    const merchant = generateWallet('test');
    const treasury = generateWallet('test');
    const payer = generateWallet('test');
    await rpc.faucet(payer.address, 10_000_000_000n);
    const id = `pay_gen_${randomBytes(4).toString('hex')}`;
    const reference = paymentReference(randomBytes(20));
    const now = Date.now();
    await host.apply(
      { kind: 'payment_intent', id, merchant: 'm', mode: 'test' },
      { type: 'intent.create', id: `c:${id}`, at: now, intent_id: id, merchant_id: 'm', mode: 'test', currency: 'ANM', requested_amount: null, anm_amount: '1000000000', payment_address: merchant.address, treasury_address: treasury.address, payment_reference: reference, expires_at: now + 3_600_000 },
    );
    const tx = buildPaymentTx(
      { id, status: 'AWAITING_PAYMENT', network: 'test', payment_address: merchant.address, treasury_address: treasury.address, merchant_amount: 980_000_000n, protocol_fee: 20_000_000n, anm_amount: 1_000_000_000n, payment_reference: reference, expires_at: null },
      { chainId: NETWORKS.test.chainId, publicKey: payer.publicKey, nonce: 0n },
    );
    await rpc.sendRawTransaction(encodeSignedTx(sign(tx, payer.secretKey)));
    await rpc.mine(20);
    const errors: unknown[] = [];
    const onA = new ChainIndexer({ network: 'test', rpc, db: b.db, bus, holder: 'a', startHeight: 0, onError: (e) => errors.push(e) });
    await onA.tick();
    for (const e of log) await host.apply(e.target, e.event);
    const paid = await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [id]);
    expect(paid.rows[0]!.state).toBe('PAID');
    const cursor = await b.db.query(`SELECT height, hash FROM chain_cursor WHERE network = 'test'`);

    // The same port's node starts again without its data: a new genesis, 3 blocks.
    await first.close();
    second = await startDevnetServer({ port: Number(new URL(first.url).port), blockMs: 0 });
    const other = new AnmRpcClient(`${second.url}/test`);
    // Kept-alive sockets to the stopped node fail once; a restarted node is reached on the next call.
    await rpc.blockNumber().catch(() => undefined);
    await other.blockNumber().catch(() => undefined);
    await other.mine(3);
    log.length = 0;
    // The running indexer sees its cursor's block gone: a suspected reorg, checked against the genesis.
    await onA.tick();
    expect(onA.halted()).toMatch(/different chain/);
    // A process started afterwards checks the genesis on its first tick.
    const onB = new ChainIndexer({ network: 'test', rpc: other, db: b.db, bus, holder: 'b', startHeight: 0, onError: (e) => errors.push(e) });
    await b.db.query(`DELETE FROM chain_leases WHERE network = 'test'`);
    await onB.tick();
    expect(onB.halted()).toMatch(/different chain/);
    expect(errors.some((e) => e instanceof DifferentChainError)).toBe(true);
    expect(log).toEqual([]); // no chain.reorged, nothing at all
    expect((await b.db.query(`SELECT height, hash FROM chain_cursor WHERE network = 'test'`)).rows).toEqual(cursor.rows);
    // Even once the other chain is longer than ours, it is still not followed.
    await other.mine(40);
    await onB.tick();
    expect(log).toEqual([]);
    const after = await b.db.query<{ state: string; tx: string | null }>(`SELECT state, snapshot->'context'->'tx'->>'hash' AS tx FROM actors WHERE id = $1`, [id]);
    expect(after.rows[0]?.state).toBe('PAID');
    expect(after.rows[0]?.tx).toMatch(/^[0-9a-f]{64}$/);
  }, 180_000);
});
