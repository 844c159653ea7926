/**
 * The seller leg on the seller's own terms (ADR 0091): its requirements, the header that
 * carries them. `@x402/core`'s
 * `paymentRequirementsMatchAccepted` is the stock seller's own check, run here on what the
 * marketplace writes.
 */
import { describe, expect, it } from 'vitest';
import { x402ResourceServer } from '@x402/core/server';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import type { SellerOffer } from '../../machines/money/seller-offer.ts';
import { decodeLeg, paymentHeaders } from './leg-codec.ts';
import { DEFAULT_TIMEOUT_S, legRequirement, sellerRequirement } from './requirements.ts';

const PAY_TO = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const offer: SellerOffer = { pay_to: PAY_TO, asset_id: USDC_TOKEN.address.toLowerCase(), max_timeout_seconds: 60, extra: { name: 'USD Coin', version: '2', feePayer: 'x' } };
/** The seller's own requirements, as its 402 showed them. */
const sellers = { scheme: 'exact', network: 'eip155:8453' as const, asset: offer.asset_id, amount: '20000', payTo: PAY_TO, maxTimeoutSeconds: 60, extra: offer.extra! };
/** The stock seller's match of a payment's `accepted` against its requirements (x402ResourceServer.findMatchingRequirements). */
const sellerTakes = (accepted: unknown) => new x402ResourceServer().findMatchingRequirements([sellers], { x402Version: 2, accepted, payload: {} } as never) !== undefined;

describe('sellerRequirement: the seller leg\'s requirements (DESIGN §5: "a valid ordinary x402 `exact` payment to the seller\'s own `payTo`")', () => {
  it('with the seller\'s offer: payTo and token as it spells them, its maxTimeoutSeconds and extra; a stock seller matches it', () => {
    const r = sellerRequirement('USDC', PAY_TO.toLowerCase(), 20_000n, offer);
    expect(r).toEqual(sellers);
    expect(sellerTakes(r)).toBe(true);
  });

  it('before any probe: the listing\'s payTo and the lane\'s defaults (legRequirement), which a seller asking 60 s refuses', () => {
    const r = sellerRequirement('USDC', PAY_TO.toLowerCase(), 20_000n, undefined);
    expect(r).toEqual(legRequirement('USDC', PAY_TO.toLowerCase(), 20_000n));
    expect(r.maxTimeoutSeconds).toBe(DEFAULT_TIMEOUT_S);
    expect(sellerTakes(r)).toBe(false);
    expect(sellerTakes({ ...r, payTo: PAY_TO, asset: offer.asset_id, maxTimeoutSeconds: 60 })).toBe(false);
  });

  it('an offer without extra keeps the lane\'s EIP-712 hints', () => {
    const { extra: _none, ...bare } = offer;
    expect(sellerRequirement('USDC', PAY_TO, 20_000n, bare).extra).toEqual({ name: USDC_TOKEN.name, version: USDC_TOKEN.version });
  });

  it('paymentHeaders writes the offer as the v2 `accepted`, and the ANM reference beside its extra', () => {
    const payload = { signature: '0xab', authorization: { from: '0x01', nonce: '0x02' } };
    const h = paymentHeaders('USDC', payload, { payTo: PAY_TO.toLowerCase(), amount: '20000', offer });
    expect(decodeLeg(h.v2.value)?.accepted).toEqual(sellers);
    expect(sellerTakes(decodeLeg(h.value)?.accepted)).toBe(true);
    const anm = paymentHeaders('ANM', payload, { payTo: 'anm1x', amount: '10', reference: 'mp1:pi_x:seller', offer: { pay_to: 'anm1x', asset_id: 'ANM', max_timeout_seconds: 90, extra: { memo: 'm' } } });
    expect(decodeLeg(anm.value)?.accepted).toMatchObject({ maxTimeoutSeconds: 90, extra: { memo: 'm', reference: 'mp1:pi_x:seller' } });
  });
});
