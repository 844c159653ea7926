/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/**
 * Spec "What the service does" rules and "Resources and their fields", one test per rule,
 * over HTTP against the real app.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeAddress } from '../../machines/chain/address.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { idem, intentBody, useHarness, type Res } from './harness.ts';

const NANM = /^[0-9]+$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
// Spec PaymentIntent table, field by field.
const FIELDS = [
  'object', 'id', 'status', 'mode', 'currency', 'requested_amount', 'anm_amount', 'anm_amount_formatted', 'merchant_amount',
  'protocol_fee', 'protocol_fee_bps', 'merchant_order_id', 'description', 'payment_address', 'payment_reference', 'checkout_url',
  'transaction_hash', 'confirmations', 'required_confirmations', 'metadata', 'created_at', 'expires_at', 'completed_at',
];

describe('conformance: resources and service rules', () => {
  const h = useHarness();
  let m: CreatedMerchant;
  const create = (body: Record<string, unknown>, key = m.keys.test.secret): Promise<Res> =>
    h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body });
  beforeAll(async () => {
    m = await h().merchant();
  });

  it('Rule 1: "1 ANM = 10^9 base units (nANM)"', async () => {
    const r = await create(intentBody({ amount: '2' }));
    expect(r.json.anm_amount).toBe('2000000000');
  });

  it('Rule 2: "anm_amount, merchant_amount and protocol_fee are integer nANM decimal strings matching ^[0-9]+$ … All amounts are JSON strings"', async () => {
    const r = await create(intentBody({ amount: '0.000000123' }));
    for (const f of ['anm_amount', 'merchant_amount', 'protocol_fee']) {
      expect(typeof r.json[f]).toBe('string');
      expect(r.json[f]).toMatch(NANM);
    }
  });

  it.each([
    ['49', '0'],
    ['50', '1'],
    ['1000000000', '20000000'],
    ['123456789123', '2469135782'],
    ['9223372036854775807', '184467440737095516'],
  ])('Rule 3: "The fee is 200 bps (2.00%) … floored. merchant_amount + protocol_fee == anm_amount exactly" (%s nANM)', async (anm, fee) => {
    const r = await create({ amount_nanm: anm });
    expect(r.status).toBe(201);
    expect(r.json.protocol_fee).toBe(fee);
    expect(BigInt(r.json.merchant_amount) + BigInt(r.json.protocol_fee)).toBe(BigInt(anm));
    expect(r.json.protocol_fee_bps).toBe(200);
  });

  it('Rule 4: "The service decides the nANM amount, the fee split, the payment address and the payment reference"', async () => {
    const [a, b] = [await create(intentBody()), await create(intentBody())];
    const balance = await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret });
    expect(a.json.payment_address).toBe(balance.json.payout_address);
    expect(a.json.payment_reference).toMatch(/^pr1:[a-z2-7]{32}$/);
    expect(a.json.payment_reference).not.toBe(b.json.payment_reference);
  });

  it('Rule 6/9: test-mode intents pay to the test network (tanm), live ones to live addresses (anm)', async () => {
    const t = await create(intentBody());
    expect(t.json.mode).toBe('test');
    expect(decodeAddress(t.json.payment_address).hrp).toBe('tanm');
    const l = await create(intentBody(), m.keys.live.secret);
    expect(l.json.mode).toBe('live');
    expect(l.json.payment_address.startsWith('anm1')).toBe(true);
  });

  it('Rule 10: "The default intent expiry is 30 minutes"', async () => {
    const r = await create(intentBody());
    expect(Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)).toBe(30 * 60 * 1000);
  });

  it('PaymentIntent: every field of the table is present, with its type', async () => {
    const r = await create(intentBody({ merchant_order_id: 'ord-fields' }));
    expect(Object.keys(r.json).sort()).toEqual([...FIELDS].sort());
    expect(r.json).toMatchObject({ object: 'payment_intent', currency: 'ANM', transaction_hash: null, confirmations: 0, completed_at: null });
    expect(r.json.id).toMatch(/^pay_[a-z2-7]{24}$/);
    expect(r.json.created_at).toMatch(ISO);
    expect(r.json.expires_at).toMatch(ISO);
  });

  it('PaymentIntent.status: "(new) → AWAITING_PAYMENT: the creation response carries this status"', async () => {
    expect((await create(intentBody())).json.status).toBe('AWAITING_PAYMENT');
  });

  it('PaymentIntent.anm_amount_formatted: "exact decimal ANM, grouped, trailing zeros trimmed"', async () => {
    expect((await create(intentBody({ amount: '1234.500000000' }))).json.anm_amount_formatted).toBe('1,234.5 ANM');
    expect((await create(intentBody({ amount: '1000000' }))).json.anm_amount_formatted).toBe('1,000,000 ANM');
  });

  it('PaymentIntent.checkout_url: "hosted checkout page {base_url}/c/<intent_id>"', async () => {
    const r = await create(intentBody());
    expect(r.json.checkout_url).toBe(`${h().url}/c/${r.json.id}`);
  });

  it('PaymentIntent.required_confirmations: "currently 12"', async () => {
    expect((await create(intentBody())).json.required_confirmations).toBe(12);
  });

  it('PaymentIntent.metadata: "echoed from creation"; description and merchant_order_id likewise', async () => {
    const metadata = { cart: [1, 2, { sku: 'ä€' }], nested: { ok: true }, n: null };
    const r = await create({ amount: '1', metadata, description: 'Tea <b>x</b>', merchant_order_id: 'ord-echo' });
    expect(r.json).toMatchObject({ metadata, description: 'Tea <b>x</b>', merchant_order_id: 'ord-echo' });
    const g = await h().req('GET', `/api/v1/payment-intents/${r.json.id}`, { key: m.keys.test.secret });
    expect(g.json.metadata).toEqual(metadata);
  });

  it('PaymentIntent.requested_amount: "amount as requested, in currency units (nANM when created via amount_nanm)"', async () => {
    expect((await create({ amount: '12.50' })).json.requested_amount).toBe('12.50');
    expect((await create({ amount_nanm: '777' })).json.requested_amount).toBe('777');
  });

  it('CreatePaymentIntentRequest.currency: "default ANM"', async () => {
    expect((await create({ amount: '1' })).json.currency).toBe('ANM');
  });

  it('CreatePaymentIntentRequest.success_url / cancel_url: "falls back to the merchant setting"', async () => {
    const withDefaults = await h().services.merchants.create({ name: 'Defaults', success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/no' });
    const own = await create({ amount: '1', success_url: 'https://shop.example/thanks' }, withDefaults.keys.test.secret);
    const { rows } = await h().backend.db.query<{ c: { success_url: string; cancel_url: string } }>(`SELECT snapshot->'context' AS c FROM actors WHERE id = $1`, [own.json.id]);
    expect(rows[0]!.c).toMatchObject({ success_url: 'https://shop.example/thanks', cancel_url: 'https://shop.example/no' });
  });

  it('Balance: "object constant balance; currency constant ANM; amounts nANM strings; payout_address bech32m"', async () => {
    const r = await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret });
    expect(r.json).toMatchObject({ object: 'balance', mode: 'test', currency: 'ANM', settled: '0', settled_formatted: '0 ANM', pending: '0', protocol_fees_paid: '0' });
    expect(decodeAddress(r.json.payout_address).hrp).toBe('tanm');
  });

  it('List wrapper: "{object: list, has_more: boolean, data: [PaymentIntent]}"', async () => {
    const r = await h().req('GET', '/api/v1/payment-intents?limit=1', { key: m.keys.test.secret });
    expect(r.json.object).toBe('list');
    expect(r.json.has_more).toBe(true);
    expect(r.json.data).toHaveLength(1);
    expect(r.json.data[0].object).toBe('payment_intent');
  });
});
