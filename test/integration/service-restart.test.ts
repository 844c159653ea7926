/**
 * A restart keeps every settlement (DESIGN §3 "The devnet keeps its chain"; spec rule 7: PAID
 * after 12 confirmations is final unless the chain itself reorganises). The whole service
 * (`startServices`, in-process devnet mining on request) settles payments made with
 * `anmpay wallet pay`, stops, starts again on the same data directory, and must show the same
 * PAID and UNDERPAID intents, transaction hashes and balance; then it keeps following the
 * same chain (a payment made after the restart settles). On the embedded PGlite + in-process bus, and on PostgreSQL + NATS.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Config } from '../../runtime/config.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { startServices, type Services } from '../../bin/services.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { cliJson } from '../helpers/cli.ts';

type Json = Record<string, unknown>;

const backends = [
  { name: 'PGlite + in-process bus', real: false },
  ...(realAvailable ? [{ name: 'PostgreSQL + NATS', real: true }] : []),
];

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.each(backends)('service restart on $name', ({ real }) => {
  it('keeps PAID (with its transaction hash), UNDERPAID and the settled balance; a payment after the restart settles on the same chain', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-restart-'));
    const schema = uniqueName('restart');
    const operatorToken = `opt_${randomBytes(16).toString('hex')}`;
    const config: Config = inProcessConfig(dataDir, operatorToken, real ? { DATABASE_URL, ANMPAY_DB_SCHEMA: schema, NATS_URL, NATS_NAMESPACE: schema } : {});
    let services: Services | undefined = await startServices(config);
    cleanups.push(async () => {
      await services?.stop();
      if (real) await dropSchema(schema);
      await rm(dataDir, { recursive: true, force: true });
    });

    const svc = (): Services => services!;
    const cli = (args: string[]): Promise<Json> =>
      cliJson<Json>(args, { ANMPAY_URL: svc().http!.url, ANMPAY_DEVNET_URL: svc().devnet!.url, ANMPAY_DATA_DIR: dataDir, ANMPAY_OPERATOR_TOKEN: operatorToken });
    const api = async (method: string, p: string, key: string, body?: unknown): Promise<Json> => {
      const res = await fetch(svc().http!.url + p, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json', 'idempotency-key': randomBytes(8).toString('hex') }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return (await res.json()) as Json;
    };
    const intent = (key: string, id: string): Promise<Json> => api('GET', `/api/v1/payment-intents/${id}`, key);
    const until = (key: string, id: string, status: string, extra: (i: Json) => boolean = () => true): Promise<Json> =>
      waitFor(async () => {
        const i = await intent(key, id);
        return i.status === status && extra(i) ? i : undefined;
      }, 30_000, `${id} to reach ${status}`);
    const rpc = (): AnmRpcClient => new AnmRpcClient(`${svc().devnet!.url}/test`);

    const merchant = (await cli(['merchant', 'create', '--name', 'Restart Shop'])) as { keys: { test: { secret: string } } };
    const key = merchant.keys.test.secret;
    const wallet = await cli(['wallet', 'create']);
    await cli(['wallet', 'fund', wallet.address as string, '20000000000']);
    const paid = [await api('POST', '/api/v1/payment-intents', key, { amount: '2.5' }), await api('POST', '/api/v1/payment-intents', key, { amount: '1.25' })];
    const under = await api('POST', '/api/v1/payment-intents', key, { amount: '1' });
    const txs: string[] = [];
    for (const i of paid) txs.push((await cli(['wallet', 'pay', i.id as string, '--wallet', wallet.wallet as string])).tx_hash as string);
    await cli(['wallet', 'pay', under.id as string, '--wallet', wallet.wallet as string, '--amount-nanm', '500000000']);
    await until(key, under.id as string, 'UNDERPAID');
    await rpc().mine(12);
    const settled = await Promise.all(paid.map((i) => until(key, i.id as string, 'PAID', (x) => x.confirmations === 12)));
    expect(settled.map((i) => i.transaction_hash)).toEqual(txs);
    const underBefore = await until(key, under.id as string, 'UNDERPAID', (x) => x.confirmations === 12);
    const balanceBefore = await api('GET', '/api/v1/balance', key);
    expect(balanceBefore.settled).toBe(String(paid.reduce((s, i) => s + BigInt(i.merchant_amount as string), 0n)));
    const headBefore = await rpc().getBlockByNumber('latest');

    await services.stop();
    services = undefined;
    services = await startServices(config);

    // The same chain came back: same head, same hash.
    expect(await rpc().getBlockByNumber('latest')).toEqual(headBefore);
    // A payment made after the restart settles on the restored chain: the indexer has followed it past every old block.
    const fresh = await api('POST', '/api/v1/payment-intents', key, { amount: '0.75' });
    const freshTx = (await cli(['wallet', 'pay', fresh.id as string, '--wallet', wallet.wallet as string])).tx_hash as string;
    await until(key, fresh.id as string, 'PAYMENT_DETECTED');
    await rpc().mine(12);
    expect((await until(key, fresh.id as string, 'PAID')).transaction_hash).toBe(freshTx);
    // Nothing settled before the restart moved (the checkout URL names the new, free port).
    const stable = ({ checkout_url: _url, ...rest }: Json): Json => rest;
    expect((await Promise.all(paid.map((i) => intent(key, i.id as string)))).map(stable)).toEqual(settled.map(stable));
    expect(stable(await intent(key, under.id as string))).toEqual(stable(underBefore));
    const balanceAfter = await api('GET', '/api/v1/balance', key);
    const plus = (field: string, v: unknown): string => String(BigInt(balanceBefore[field] as string) + BigInt(v as string));
    expect(balanceAfter).toMatchObject({ pending: '0', settled: plus('settled', fresh.merchant_amount), protocol_fees_paid: plus('protocol_fees_paid', fresh.protocol_fee) });
  }, 240_000);
});
