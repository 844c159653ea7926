/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/** Spec rule 5 (fiat quotes) with a configured rate source (ANM_RATES), DESIGN §4 "Fiat". */
import { beforeAll, describe, expect, it } from 'vitest';
import { fiatToNanm } from '../../machines/money/money.ts';
import { UrlRates } from '../../runtime/rates/rate-source.ts';
import { idem, SPEC_LIMITS, useHarness } from './harness.ts';

describe('conformance: fiat with ANM_RATES=USD=0.25,EUR=0.23', () => {
  const h = useHarness(SPEC_LIMITS, { ANM_RATES: 'USD=0.25,EUR=0.23' });
  let key: string;
  const create = (body: Record<string, unknown>) => h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body });
  beforeAll(async () => {
    key = (await h().merchant()).keys.test.secret;
  });

  it('Rule 5: "With a fiat currency (for example USD) the service locks an exchange-rate quote"', async () => {
    const r = await create({ amount: '10.00', currency: 'USD' });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ currency: 'USD', requested_amount: '10.00', anm_amount: '40000000000', anm_amount_formatted: '40 ANM' });
    const { rows } = await h().backend.db.query<{ q: { rate: string; source: string; at: number } }>(`SELECT snapshot->'context'->'quote' AS q FROM actors WHERE id = $1`, [r.json.id]);
    expect(rows[0]!.q).toMatchObject({ rate: '0.25', source: 'ANM_RATES' });
    expect(typeof rows[0]!.q.at).toBe('number');
  });

  it('DESIGN §4: "nANM = ceil(amount / rate × 10^9)" — the conversion never under-charges', async () => {
    const r = await create({ amount: '1', currency: 'EUR' });
    expect(r.json.anm_amount).toBe(fiatToNanm('1', '0.23').toString());
    expect(r.json.anm_amount).toBe('4347826087');
    expect(BigInt(r.json.merchant_amount) + BigInt(r.json.protocol_fee)).toBe(BigInt(r.json.anm_amount));
  });

  it('CreatePaymentIntentRequest.amount: "Max 9 decimal places for ANM, 2 for fiat"', async () => {
    expect((await create({ amount: '0.01', currency: 'USD' })).status).toBe(201);
    const r = await create({ amount: '0.001', currency: 'USD' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_amount');
  });

  it('Currency codes are case-insensitive; a currency with no rate is 400 currency_unsupported', async () => {
    expect((await create({ amount: '2', currency: 'usd' })).json.currency).toBe('USD');
    for (const currency of ['JPY', 'DOLLARS', '', 'U$D']) {
      const r = await create({ amount: '2', currency });
      expect(r.status, currency).toBe(400);
      expect(r.json.error.code).toBe('currency_unsupported');
    }
  });

  it('amount_nanm: "valid only with currency ANM"', async () => {
    const r = await create({ amount_nanm: '100', currency: 'USD' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_body');
  });

  it('RATE_SOURCE_URL: a JSON table is fetched, cached, and a failing source gives no quote rather than a guess', async () => {
    let calls = 0;
    let up = true;
    const fake = (async () => {
      calls++;
      if (!up) throw new Error('down');
      return new Response(JSON.stringify({ rates: { USD: '0.5', XXX: 'nope' } }));
    }) as typeof fetch;
    const cached = new UrlRates({ url: 'https://rates.example/anm', fetch: fake });
    expect(await cached.quote('USD')).toMatchObject({ rate: '0.5', source: 'https://rates.example/anm' });
    expect(await cached.quote('XXX')).toBeNull();
    expect(calls).toBe(1);
    const src = new UrlRates({ url: 'https://rates.example/anm', fetch: fake, ttlMs: 0, maxAgeMs: 50 });
    expect(await src.quote('USD')).toMatchObject({ rate: '0.5' });
    up = false;
    await new Promise((r) => setTimeout(r, 80));
    expect(await src.quote('USD')).toBeNull();
    expect(calls).toBe(3);
  });
});
