/**
 * A marketplace process for the routed-execution fault test: joins the parent's PostgreSQL
 * schema and NATS namespace (SCHEMA, NAMESPACE), optionally the ANM lane on its devnet (ANM_RPC_URL), serves the marketplace on port 0, prints its
 * URL, and is SIGKILLed by the parent in the middle of a call (HOLD_ANSWERS=1: after answering it,
 * before the answer is recorded; FEE_FAULT: in the fee step of a served call, once it printed `fee-fault`).
 */
import { buildMarketApp } from '../../gateway/market/app.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL } from '../helpers/backends.ts';
import { FEE_ADDRESSES } from './harness.ts';

const db = await openDb({ databaseUrl: DATABASE_URL, schema: process.env.SCHEMA });
const bus = await NatsBus.connect({ url: NATS_URL, namespace: process.env.NAMESPACE! });
const host = new ActorHost({ db, bus, registry: machineRegistry() });
// HOLD_ANSWERS=1: the process stops between sending a seller's answer and recording it (the
// record never completes), for the parent to kill it there.
if (process.env.HOLD_ANSWERS === '1') {
  const apply = host.apply.bind(host);
  host.apply = (target, event, companion) => ((event as { type?: unknown }).type === 'execute.answered' ? new Promise(() => undefined) : apply(target, event, companion));
}
// ANM_RPC_URL: the ANM lane on the parent's devnet.
const anmRpc = process.env.ANM_RPC_URL;
const anm = anmRpc ? { rpc: new AnmRpcClient(anmRpc), confirmations: 1 } : undefined;
const market = openMarket(db, host, { feeAddresses: FEE_ADDRESSES, forward: { allowPrivate: true }, anm });
// FEE_FAULT: the process stops in the fee step of a served USDC call, prints `fee-fault` and
// waits to be killed. `before-transfer` / `after-transfer`: the fee is settled apart from the
// answer's record (as on a ledger that cannot carry it in that statement), and the process stops
// before the transfer, or after it committed but before the purchase recorded it.
// `after-record`: right after the statement that records the answer and moves the fee (ADR 0052).
const fault = process.env.FEE_FAULT;
const stop = (): Promise<never> => {
  process.stdout.write('fee-fault\n');
  return new Promise<never>(() => undefined);
};
if (fault === 'before-transfer' || fault === 'after-transfer') {
  (market.ledger as { settlementCompanion?: unknown }).settlementCompanion = undefined;
  const transfer = market.ledger.transferWithAuthorization.bind(market.ledger);
  market.ledger.transferWithAuthorization = async (a, nowS) => {
    if (a.to.toLowerCase() !== FEE_ADDRESSES.USDC.toLowerCase()) return transfer(a, nowS);
    if (fault === 'after-transfer') await transfer(a, nowS);
    return stop();
  };
}
if (fault === 'after-record') {
  const apply = host.apply.bind(host);
  host.apply = async (target, event, companion) => {
    const r = await apply(target, event, companion);
    return (event as { fee_tx?: unknown }).fee_tx !== undefined ? stop() : r;
  };
}
await market.index.refresh();
const app = await buildMarketApp({ ...market, perIpPerMinute: 1e6 });
process.stdout.write(`${await app.listen({ port: 0, host: '127.0.0.1' })}\n`);
