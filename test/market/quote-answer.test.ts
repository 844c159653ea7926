/**
 * The quote's answer from kept text (runtime/market/quote-answer.ts) against the object it
 * renders, and the route's plain body check against its schema (gateway/market/quote.ts): the
 * shortcuts must say exactly what the full paths say.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainQuote, quoteBody } from '../../gateway/market/quote.ts';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { newIntentId } from '../../runtime/market/intent-id.ts';
import { quoteAnswer, quoteAnswerJson, quoteTerms } from '../../runtime/market/quote-answer.ts';

const text = fc.string({ unit: 'binary', maxLength: 40 });
const record = fc.record({ resource_id: text, name: text, endpoint: text, method: fc.constantFrom('GET', 'POST'), description: text });
const price = fc.bigInt({ min: 1n, max: 10n ** 18n }).map(String);

describe('quote answer from kept text', () => {
  it('is JSON.stringify of the answer object, for any listing, asset, id and expiry', () => {
    fc.assert(
      fc.property(record, fc.constantFrom('USDC' as const, 'ANM' as const), text, price, text, fc.array(fc.integer({ min: 0, max: 4_102_444_800_000 }), { minLength: 1, maxLength: 3 }), (r, asset, payTo, p, fee, expiries) => {
        const t = quoteTerms(r, { pay_to: payTo, seller_price_atomic: p }, asset, USDC_TOKEN, fee);
        for (const at of expiries) {
          const id = newIntentId();
          expect(quoteAnswerJson(t, id, at)).toBe(JSON.stringify(quoteAnswer(t, id, at)));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('names the intent wherever the answer does: the intent, the extra and, on ANM, both leg references', () => {
    const t = quoteTerms({ resource_id: 'res_1', name: 'n', endpoint: 'https://s.example/x', method: 'GET', description: 'd' }, { pay_to: 'anm1s', seller_price_atomic: '1000000' }, 'ANM', USDC_TOKEN, 'anm1fee');
    const a = JSON.parse(quoteAnswerJson(t, 'pi_00ff', 1_700_000_000_999)) as ReturnType<typeof quoteAnswer>;
    expect(a.intent_id).toBe('pi_00ff');
    expect(a.expires_at).toBe(1_700_000_000);
    const extra = a.payment_requirements.accepts[0]!.extra as { intent_id: string; legs: { seller: { reference: string }; fee: { reference: string } } };
    expect([extra.intent_id, extra.legs.seller.reference, extra.legs.fee.reference]).toEqual(['pi_00ff', 'mp1:pi_00ff:seller', 'mp1:pi_00ff:fee']);
  });
});

describe('intent ids', () => {
  it('are pi_ and 24 hex digits, none twice across many draws of the pool', () => {
    const ids = Array.from({ length: 2_000 }, newIntentId);
    for (const id of ids) expect(id).toMatch(/^pi_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the quote body check', () => {
  const near = fc.record(
    {
      capability: fc.oneof(fc.string({ maxLength: 510 }), fc.integer(), fc.constant('')),
      max_price: fc.oneof(fc.constantFrom('1', '0', '0.000001', '0.0000001', '1.5', '-1', '1e3', ' 1', '12345678901234567890', 'abc'), fc.string({ maxLength: 110 }), fc.integer()),
      asset: fc.oneof(fc.constantFrom('USDC', 'ANM', 'usdc', 'BTC'), fc.integer()),
      max_latency_ms: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.MAX_VALUE, Number.NaN), fc.string()),
      other: fc.string(),
    },
    { requiredKeys: [] },
  );

  it('accepts only bodies the schema accepts, reading them as it does', () => {
    fc.assert(
      fc.property(fc.oneof(near, fc.anything()), (body) => {
        const plain = plainQuote(body);
        if (plain === undefined) return;
        const r = quoteBody.safeParse(body);
        expect(r.success).toBe(true);
        if (r.success) expect(plain).toEqual({ capability: r.data.capability, maxPrice: r.data.max_price, asset: r.data.asset, maxLatencyMs: r.data.max_latency_ms });
      }),
      { numRuns: 3_000 },
    );
  });

  it('accepts the bodies agents send', () => {
    expect(plainQuote({ capability: 'weather' })).toEqual({ capability: 'weather', maxPrice: undefined, asset: 'USDC', maxLatencyMs: undefined });
    expect(plainQuote({ capability: 'weather', max_price: '0.5', asset: 'ANM', max_latency_ms: 200 })).toEqual({ capability: 'weather', maxPrice: '0.5', asset: 'ANM', maxLatencyMs: 200 });
  });
});
