/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read parsed JSON response bodies. */
/**
 * The marketplace SIGKILLed mid-call on the ANM lane (issue 21 "Fault test"; ADR 0038): the
 * seller took its payment (its transfer is on the chain) but the dead process recorded no
 * answer. The next process's watch never submits the fee transfer for it, and the execution
 * deadline ends it SELLER_FAILED with the fee transfer never on the chain.
 */
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { decodeSignedTx, txHash } from '../../machines/chain/index.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { openReal, realAvailable } from '../helpers/backends.ts';
import { seller, signedListing } from '../fixtures/market.ts';
import { ANM, anmBuyer, anmLeg } from '../fixtures/market-anm.ts';
import { startAnmChain } from './anm-chain.ts';
import { FEE_ADDRESSES } from './harness.ts';
import { startChild } from './market-child.ts';

const PRICE = 250_000_000n;

describe.skipIf(!realAvailable)('ANM routed execution: marketplace killed mid-call (PostgreSQL + NATS)', () => {
  it('the seller was paid but no answer was recorded: the fee transfer is never submitted', { timeout: 60_000 }, async () => {
    const b = await openReal();
    const host = new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() });
    const chain = await startAnmChain(b, host);
    let child: ChildProcess | undefined;
    let sellerHits = 0;
    // The seller takes its payment (submits the transfer, which lands), then the marketplace dies.
    const sellerServer = http.createServer((req) => {
      sellerHits++;
      const header = JSON.parse(Buffer.from(String(req.headers['payment-signature']), 'base64').toString());
      void chain.rpc
        .sendRawTransaction(header.payload.transaction as string)
        .then(() => chain.rpc.mine(3))
        .finally(() => child?.kill('SIGKILL'));
    });
    try {
      await new Promise<void>((r) => sellerServer.listen(0, '127.0.0.1', r));
      const endpoint = `http://127.0.0.1:${(sellerServer.address() as AddressInfo).port}/map`;
      const market = openMarket(b.db, host, { feeAddresses: FEE_ADDRESSES, anm: { rpc: chain.rpc, confirmations: 1 } });
      const s = seller();
      await market.listings.register(await signedListing(s, { name: 'Doomed mapmaker', tags: ['mapmaker'], endpoint, asset: 'ANM', price: '0.25' }));
      const buyer = await anmBuyer(chain.rpc, 10n * ANM);

      const started = startChild({ SCHEMA: b.schema!, NAMESPACE: b.namespace!, ANM_RPC_URL: `${chain.devnet.url}/live` });
      child = started.p;
      const exited = new Promise<NodeJS.Signals | null>((r) => started.p.once('exit', (_c, sig) => r(sig)));
      const url = await started.url;
      const q = await (await fetch(`${url}/api/v1/route/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ capability: 'mapmaker', asset: 'ANM' }) })).json();
      const legs = q.payment_requirements.accepts[0].extra.legs;
      const nonce = await chain.rpc.getNonce(buyer.keys.address, 'pending');
      const sellerLeg = anmLeg(buyer.keys, { to: s.anmAddress, amount: PRICE, reference: '', nonce });
      const fee = anmLeg(buyer.keys, { to: legs.fee.payTo, amount: BigInt(legs.fee.amount as string), reference: legs.fee.reference as string, nonce: nonce + 1n });
      const feeHash = txHash(decodeSignedTx(fee.payload.transaction));
      const sellerPayment = Buffer.from(JSON.stringify(sellerLeg)).toString('base64');
      const call = fetch(`${url}/api/v1/route/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: sellerPayment }) });
      await expect(call).rejects.toThrow();
      expect(await exited).toBe('SIGKILL');
      expect(sellerHits).toBe(1);
      // The seller's own transfer is on the chain, deep enough to count as settled.
      expect(await chain.rpc.getTransactionReceipt(txHash(decodeSignedTx(sellerLeg.payload.transaction)))).toMatchObject({ status: 'success' });

      const intentId = q.intent_id as string;
      expect((await market.purchases.read(intentId))!.status).toBe('EXECUTING');
      await Promise.all([market.executions.reconcile(), market.executions.reconcile()]);
      expect(await chain.rpc.getTransactionByHash(feeHash)).toBeNull();
      const { rows } = await b.db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'execution'`, [intentId]);
      const r = await host.apply({ kind: 'purchase', id: intentId }, { type: 'timer.expired', id: 'exec-deadline', at: Date.now() + 60_000, timer: 'execution', generation: rows[0]!.generation });
      expect(r.status).toBe('SELLER_FAILED');
      await market.executions.reconcile();
      await chain.rpc.mine(2);
      expect(await chain.rpc.getTransactionByHash(feeHash)).toBeNull();
      expect(await chain.rpc.getBalance(FEE_ADDRESSES.ANM)).toBe(0n);
    } finally {
      child?.kill('SIGKILL');
      sellerServer.closeAllConnections();
      await new Promise((r) => sellerServer.close(r));
      await chain.stop();
      await b.close();
    }
  });
});
