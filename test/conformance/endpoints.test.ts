/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/** Spec "Endpoints" table and "Behaviour of specific operations" (list, cancel, balance, healthz). */
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { startHttp } from '../../gateway/server.ts';
import { DRAIN_MS, expectDrainOnClose, idem, intentBody, request, useHarness, type Res } from './harness.ts';

describe('conformance: endpoints', () => {
  const h = useHarness();
  let m: CreatedMerchant;
  let key: string;
  const create = (body: Record<string, unknown> = intentBody(), k = key): Promise<Res> => h().req('POST', '/api/v1/payment-intents', { key: k, idem: idem(), body });
  const ids: string[] = [];
  beforeAll(async () => {
    m = await h().merchant();
    key = m.keys.test.secret;
    for (let i = 0; i < 23; i++) ids.push((await create(intentBody({ merchant_order_id: `list-${i}` }))).json.id as string);
  });

  it('POST /api/v1/payment-intents: "201 PaymentIntent"', async () => {
    const r = await create();
    expect(r.status).toBe(201);
    expect(r.json.object).toBe('payment_intent');
  });

  it('GET /api/v1/payment-intents/{id}: "200 PaymentIntent"', async () => {
    const r = await h().req('GET', `/api/v1/payment-intents/${ids[0]}`, { key });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ object: 'payment_intent', id: ids[0], merchant_order_id: 'list-0' });
  });

  it('GET /api/v1/payment-intents: "limit (integer 1-100, default 20)"', async () => {
    const r = await h().req('GET', '/api/v1/payment-intents', { key });
    expect(r.json.data).toHaveLength(20);
    expect(r.json.has_more).toBe(true);
    expect((await h().req('GET', '/api/v1/payment-intents?limit=100', { key })).json.data.length).toBeGreaterThanOrEqual(23);
    expect((await h().req('GET', '/api/v1/payment-intents?limit=1', { key })).json.data).toHaveLength(1);
  });

  it('GET /api/v1/payment-intents: "200 list wrapper, newest first"', async () => {
    const r = await h().req('GET', '/api/v1/payment-intents?limit=100', { key });
    const listed = (r.json.data as Array<{ id: string }>).map((x) => x.id).filter((id) => ids.includes(id));
    expect(listed).toEqual([...ids].reverse());
  });

  it('GET /api/v1/payment-intents: "starting_after (intent id cursor)" pages through everything once, has_more false at the end', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 20; page++) {
      const r = await h().req('GET', `/api/v1/payment-intents?limit=7${after ? `&starting_after=${after}` : ''}`, { key });
      const data = r.json.data as Array<{ id: string }>;
      seen.push(...data.map((x) => x.id));
      if (!r.json.has_more) break;
      after = data.at(-1)!.id;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
  });

  it('GET /api/v1/payment-intents: "status (one of the 11 states)" filters', async () => {
    const c = await create();
    await h().req('POST', `/api/v1/payment-intents/${c.json.id}/cancel`, { key });
    const r = await h().req('GET', '/api/v1/payment-intents?status=EXPIRED', { key });
    expect((r.json.data as Array<{ id: string; status: string }>).map((x) => x.id)).toEqual([c.json.id]);
    const open = await h().req('GET', '/api/v1/payment-intents?status=AWAITING_PAYMENT&limit=100', { key });
    expect((open.json.data as Array<{ status: string }>).every((x) => x.status === 'AWAITING_PAYMENT')).toBe(true);
  });

  it('GET /api/v1/payment-intents: "merchant_order_id (exact match)"', async () => {
    const r = await h().req('GET', '/api/v1/payment-intents?merchant_order_id=list-7', { key });
    expect((r.json.data as Array<{ id: string }>).map((x) => x.id)).toEqual([ids[7]]);
    expect((await h().req('GET', '/api/v1/payment-intents?merchant_order_id=list-', { key })).json.data).toEqual([]);
  });

  it('GET /api/v1/payment-intents: "scoped to merchant and mode"', async () => {
    const other = await h().merchant();
    expect((await h().req('GET', '/api/v1/payment-intents', { key: other.keys.test.secret })).json.data).toEqual([]);
    expect((await h().req('GET', '/api/v1/payment-intents', { key: m.keys.live.secret })).json.data).toEqual([]);
  });

  it('POST /api/v1/payment-intents/{id}/cancel: "200 PaymentIntent", status EXPIRED', async () => {
    const c = await create();
    const r = await h().req('POST', `/api/v1/payment-intents/${c.json.id}/cancel`, { key });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: c.json.id, status: 'EXPIRED' });
  });

  it('Cancel: "otherwise 409 not_cancellable" (a second cancel, a settled intent)', async () => {
    const c = await create();
    await h().req('POST', `/api/v1/payment-intents/${c.json.id}/cancel`, { key });
    const again = await h().req('POST', `/api/v1/payment-intents/${c.json.id}/cancel`, { key });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('not_cancellable');
    const paid = await create();
    await settle(paid.json, 12);
    expect((await h().req('POST', `/api/v1/payment-intents/${paid.json.id}/cancel`, { key })).json.error.code).toBe('not_cancellable');
  });

  /** Stands in for the chain indexer: the matching transaction included at `depth`. */
  async function settle(intent: Record<string, string>, depth: number, seenOnly = false): Promise<void> {
    const legs = { tx_hash: `tx-${intent.id}`, from: 'tanm1payer', merchant_leg: intent.merchant_amount, fee_leg: intent.protocol_fee };
    const target = { kind: 'payment_intent', id: intent.id! };
    const at = Date.now();
    if (seenOnly) await h().deps.host.apply(target, { type: 'chain.tx.seen', id: `seen-${intent.id}`, at, ...legs });
    else await h().deps.host.apply(target, { type: 'chain.tx.included', id: `inc-${intent.id}`, at, ...legs, block_height: 100, block_hash: 'b100', receipt: 'success', head: 99 + depth });
  }

  it('GET /api/v1/balance: "200 Balance for the key\'s mode": settled at depth, pending before, fees paid', async () => {
    const fresh = await h().merchant();
    const k = fresh.keys.test.secret;
    const a = (await create({ amount: '10' }, k)).json;
    const b = (await create({ amount: '3' }, k)).json;
    await settle(a, 12);
    await settle(b, 0, true);
    const r = await h().req('GET', '/api/v1/balance', { key: k });
    expect(r.json).toMatchObject({ settled: '9800000000', settled_formatted: '9.8 ANM', pending: '2940000000', pending_formatted: '2.94 ANM', protocol_fees_paid: '200000000' });
    const live = await h().req('GET', '/api/v1/balance', { key: fresh.keys.live.secret });
    expect(live.json).toMatchObject({ mode: 'live', settled: '0', pending: '0', payout_address: `anm1live${fresh.merchant_id.slice(4)}` });
  });

  it('GET /healthz: "200 {status: string}; 503 when traffic should not be routed here" (draining, database down)', async () => {
    expect((await h().req('GET', '/healthz')).json).toEqual({ status: 'ok' });
    h().deps.lifecycle.draining = true;
    expect((await h().req('GET', '/healthz')).status).toBe(503);
    h().deps.lifecycle.draining = false;
    const healthy = h().deps.dbHealthy;
    h().deps.dbHealthy = async () => false;
    const down = await h().req('GET', '/healthz');
    h().deps.dbHealthy = healthy;
    expect(down.status).toBe(503);
    expect(typeof down.json.status).toBe('string');
  });

  it('GET /healthz while the process drains on shutdown: 503 until the listener closes, in-flight requests answered', async () => {
    const { lifecycle: _l, baseUrl: _b, ...deps } = h().deps;
    const edge = await startHttp(deps, { host: '127.0.0.1', port: 0, drainMs: DRAIN_MS });
    await expectDrainOnClose(edge, () => request(edge.url, 'GET', '/api/v1/balance', { key }), 200);
  });

  it('GET /c/{id}/payment.json: public ("the unguessable id is the capability"), what a wallet pays', async () => {
    const c = (await create()).json;
    const r = await h().req('GET', `/c/${c.id}/payment.json`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id: c.id,
      status: 'AWAITING_PAYMENT',
      network: 'test',
      payment_address: c.payment_address,
      merchant_amount: c.merchant_amount,
      protocol_fee: c.protocol_fee,
      anm_amount: c.anm_amount,
      payment_reference: c.payment_reference,
      expires_at: c.expires_at,
    });
    expect(r.json.treasury_address).toMatch(/^tanm1/);
    expect((await h().req('GET', '/c/pay_aaaaaaaaaaaaaaaaaaaaaaaa/payment.json')).status).toBe(404);
  });
});
