/**
 * The quote's answer from kept text (runtime/market/quote-answer.ts) against the object it
 * renders: the kept text must say exactly what the object says.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
