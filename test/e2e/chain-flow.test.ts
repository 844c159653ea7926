/**
 * Issue 4 end to end over HTTP and the CLI: the whole service (`startServices`) with the devnet
 * mining on request, the indexer following it, merchants made with `anmpay merchant create`,
 * customers paying with `anmpay wallet pay`, blocks and reorgs with `anmpay devnet`, refunds
 * signed with `anmpay refund sign`. Real PostgreSQL + NATS when reachable (own schema and
 * namespace), the embedded pair otherwise.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { startServices, type Services } from '../../bin/services.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { verifyIndependently } from '../webhooks/independent-verifier.ts';
import { Receiver } from '../webhooks/receiver.ts';
import { cliJson } from '../helpers/cli.ts';

type Json = Record<string, unknown>;
let services: Services;
let dataDir: string;
let base: string;
const operatorToken = `opt_${randomBytes(16).toString('hex')}`;
const schema = uniqueName('e2e');
let receiver: Receiver;
let webhookSecret: string;
let merchant: { merchant_id: string; keys: { test: { secret: string }; live: { secret: string } } };

const cli = (args: string[], env: Record<string, string> = {}): Promise<Json> =>
  cliJson<Json>(args, { ANMPAY_URL: base, ANMPAY_DEVNET_URL: services.devnet!.url, ANMPAY_DATA_DIR: dataDir, ANMPAY_OPERATOR_TOKEN: operatorToken, ...env });

async function api(method: string, p: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function createIntent(key: string, amount: string): Promise<Json> {
  const r = await api('POST', '/api/v1/payment-intents', key, { amount }, { 'idempotency-key': randomBytes(8).toString('hex') });
  expect(r.status).toBe(201);
  return r.body;
}

async function intentState(key: string, id: string, status: string, timeoutMs = 20_000): Promise<Json> {
  return waitFor(async () => {
    const r = await api('GET', `/api/v1/payment-intents/${id}`, key);
    return r.body.status === status ? r.body : undefined;
  }, timeoutMs, `${id} to reach ${status}`);
}

/** Blocks are mined and then the indexer must have seen the new head (poll interval 250 ms). */
async function mine(n: number, network: 'test' | 'live' = 'test'): Promise<void> {
  await cli(['devnet', 'mine', String(n), '--network', network]);
  await new Promise((r) => setTimeout(r, 700));
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-e2e-chain-'));
  const config = loadConfig({
    ANMPAY_DATA_DIR: dataDir,
    PORT: '0',
    MARKETPLACE_PORT: '0',
    DEVNET_PORT: '0',
    ANMPAY_DEMO_SELLER: '0',
    DEVNET_BLOCK_MS: '0',
    LOG_LEVEL: 'silent',
    ANMPAY_ALLOW_PRIVATE_WEBHOOKS: '1',
    ANMPAY_OPERATOR_TOKEN: operatorToken,
    ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'),
    ...(realAvailable ? { DATABASE_URL, ANMPAY_DB_SCHEMA: schema, NATS_URL, NATS_NAMESPACE: schema } : {}),
  });
  services = await startServices(config);
  base = services.http!.url;
  merchant = (await cli(['merchant', 'create', '--name', 'E2E Chain Shop'])) as typeof merchant;
  receiver = await Receiver.start();
  const hook = await cli(['webhook', 'set', '--merchant', merchant.merchant_id, '--mode', 'test', '--url', `http://127.0.0.1:${receiver.port}/hooks`]);
  webhookSecret = hook.secret as string;
  expect(webhookSecret).toMatch(/^whsec_/);
}, 120_000);

afterAll(async () => {
  await services?.stop();
  await receiver?.close();
  if (realAvailable) await dropSchema(schema);
  await rm(dataDir, { recursive: true, force: true });
});

describe('ANM chain end to end over HTTP and the CLI (issue 4)', () => {
  it('rule 7: detected, confirming, then PAID exactly at depth 12; the balance follows', async () => {
    const key = merchant.keys.test.secret;
    const intent = await createIntent(key, '2.5');
    const wallet = await cli(['wallet', 'create']);
    await cli(['wallet', 'fund', wallet.address as string, '10000000000']);
    const paid = await cli(['wallet', 'pay', intent.id as string, '--wallet', wallet.wallet as string]);
    expect(paid.tx_hash).toMatch(/^[0-9a-f]{64}$/);
    await intentState(key, intent.id as string, 'PAYMENT_DETECTED');
    await mine(1);
    await intentState(key, intent.id as string, 'CONFIRMING');
    await mine(10);
    const at11 = await intentState(key, intent.id as string, 'CONFIRMING');
    await waitFor(async () => (await api('GET', `/api/v1/payment-intents/${intent.id as string}`, key)).body.confirmations === 11, 10_000, 'confirmations 11');
    expect(at11.status).toBe('CONFIRMING');
    const pending = await api('GET', '/api/v1/balance', key);
    expect(pending.body.pending).toBe(intent.merchant_amount);
    await mine(1);
    const done = await intentState(key, intent.id as string, 'PAID');
    expect(done.confirmations).toBe(12);
    expect(done.transaction_hash).toBe(paid.tx_hash);
    const bal = await api('GET', '/api/v1/balance', key);
    expect(bal.body.settled).toBe(intent.merchant_amount);
    expect(bal.body.protocol_fees_paid).toBe(intent.protocol_fee);
    // Signed webhooks for the whole life, in order, each verifiable from the spec's five steps.
    const mine4 = () => receiver.received.filter((r) => r.body.data.id === intent.id);
    await waitFor(async () => mine4().some((r) => r.body.type === 'payment.confirmed'), 20_000, 'payment.confirmed webhook');
    expect(mine4().map((r) => r.body.type)).toEqual(['payment.created', 'payment.detected', 'payment.confirming', 'payment.confirmed']);
    for (const r of mine4()) {
      expect(verifyIndependently({ rawBody: r.rawBody, headers: r.headers, secret: webhookSecret, nowSeconds: Math.floor(Date.now() / 1000) })).toEqual({ ok: true, eventId: r.body.id });
    }
  }, 90_000);

  it('underpayment with --amount-nanm shows UNDERPAID; a reorg after settlement (devnet reorg --drop) returns to AWAITING_PAYMENT', async () => {
    const key = merchant.keys.test.secret;
    const wallet = await cli(['wallet', 'create']);
    await cli(['wallet', 'fund', wallet.address as string, '10000000000']);
    const under = await createIntent(key, '1');
    await cli(['wallet', 'pay', under.id as string, '--wallet', wallet.wallet as string, '--amount-nanm', '500000000']);
    await intentState(key, under.id as string, 'UNDERPAID');

    const intent = await createIntent(key, '1');
    const paid = await cli(['wallet', 'pay', intent.id as string, '--wallet', wallet.wallet as string]);
    await mine(12);
    await intentState(key, intent.id as string, 'PAID');
    await cli(['devnet', 'reorg', '12', '--drop', paid.tx_hash as string]);
    const back = await intentState(key, intent.id as string, 'AWAITING_PAYMENT');
    expect(back.transaction_hash).toBeNull();
    // Paying again settles again.
    await cli(['wallet', 'pay', intent.id as string, '--wallet', wallet.wallet as string]);
    await mine(12);
    await intentState(key, intent.id as string, 'PAID');
  }, 120_000);

  it('refunds (rule 8, DESIGN §4): test mode 403; partial refunds signed with the CLI up to the cap; above the remainder 409', async () => {
    const live = merchant.keys.live.secret;
    const testKey = merchant.keys.test.secret;
    const payout = await cli(['wallet', 'create', '--network', 'live']);
    // Live intents need the merchant's own payout address first.
    const refused = await api('POST', '/api/v1/payment-intents', live, { amount: '1' }, { 'idempotency-key': randomBytes(8).toString('hex') });
    expect(refused.status).toBe(400);
    expect((refused.body.error as Json).code).toBe('payout_address_required');
    await cli(['payout', 'set', '--merchant', merchant.merchant_id, '--mode', 'live', '--address', payout.address as string]);

    const intent = await createIntent(live, '1');
    const customer = await cli(['wallet', 'create', '--network', 'live']);
    await cli(['wallet', 'fund', customer.address as string, '10000000000', '--network', 'live']);
    await cli(['wallet', 'pay', intent.id as string, '--wallet', customer.wallet as string]);
    await mine(12, 'live');
    await intentState(live, intent.id as string, 'PAID');

    const testRefund = await api('POST', '/api/v1/refunds', testKey, { payment_intent: intent.id });
    expect(testRefund.status).toBe(403);

    const r1 = await api('POST', '/api/v1/refunds', live, { payment_intent: intent.id, amount: '0.3', reason: 'one item back' });
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({ object: 'refund', status: 'REQUIRES_SIGNATURE', amount: '300000000', requires_merchant_signature: true });
    const transfer = r1.body.unsigned_transfer as Json;
    expect(transfer).toMatchObject({ chain_id: 1, from: payout.address, to: customer.address, amount: '300000000' });
    expect(transfer.reference).toMatch(/^rf1:/);

    const over = await api('POST', '/api/v1/refunds', live, { payment_intent: intent.id, amount: '0.69' });
    expect(over.status).toBe(409);
    expect((over.body.error as Json).code).toBe('refund_refused');

    await cli(['refund', 'sign', r1.body.id as string, '--wallet', payout.wallet as string], { ANMPAY_API_KEY: live });
    await mine(12, 'live');
    await waitFor(async () => (await api('GET', `/api/v1/refunds/${r1.body.id as string}`, live)).body.status === 'CONFIRMED', 20_000, 'refund CONFIRMED');
    await intentState(live, intent.id as string, 'PARTIALLY_REFUNDED');
    // Balance follows refunds: settled = what the merchant leg received less confirmed refunds.
    const afterFirst = await api('GET', '/api/v1/balance', live);
    expect(afterFirst.body).toMatchObject({ mode: 'live', settled: '680000000', payout_address: payout.address });

    // Default amount: the remaining cap (merchant_amount 0.98 ANM − 0.3).
    const r2 = await api('POST', '/api/v1/refunds', live, { payment_intent: intent.id });
    expect(r2.status).toBe(201);
    expect(r2.body.amount).toBe('680000000');
    await cli(['refund', 'sign', r2.body.id as string, '--wallet', payout.wallet as string], { ANMPAY_API_KEY: live });
    await mine(12, 'live');
    await intentState(live, intent.id as string, 'REFUNDED');
    expect((await api('GET', '/api/v1/balance', live)).body.settled).toBe('0');
    const none = await api('POST', '/api/v1/refunds', live, { payment_intent: intent.id });
    expect(none.status).toBe(409);
    expect((none.body.error as Json).code).toBe('not_refundable');
  }, 150_000);
});
