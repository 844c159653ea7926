import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { decodeLeg, fromBase64Json, paymentHeaders } from './leg-codec.ts';
import { DEFAULT_TIMEOUT_S, legRequirement, v1NetworkName } from './requirements.ts';
import type { UsdcToken } from './lanes/usdc-ledger.ts';

/** The headers as the code before wrote them: each document stringified whole. */
function wholeDocuments(asset: 'USDC' | 'ANM', payload: Record<string, unknown>, seller: { payTo: string; amount: string; reference?: string }, token: UsdcToken, version: 1 | 2) {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64');
  const accepted = legRequirement(asset, seller.payTo, BigInt(seller.amount), DEFAULT_TIMEOUT_S, token);
  const v1 = v1NetworkName(token);
  if (seller.reference !== undefined) accepted.extra = { ...accepted.extra, reference: seller.reference };
  const v2Header = { header: 'PAYMENT-SIGNATURE', value: b64({ x402Version: 2, accepted, payload }) };
  const v1Header = asset === 'USDC' && v1 ? { header: 'X-PAYMENT', value: b64({ x402Version: 1, scheme: 'exact', network: v1, payload }) } : null;
  // DESIGN §5 "Purchase": the header for the seller's x402 version; v2 where v1 has no name for the lane.
  const chosen = version === 1 && v1Header ? v1Header : v2Header;
  return { ...chosen, x402_version: chosen === v1Header ? 1 : 2, v1: v1Header, v2: v2Header };
}

const payloads = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })).map((v) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>);
const tokens = fc.constantFrom<UsdcToken>(USDC_TOKEN, { ...USDC_TOKEN, chainId: 84532, name: 'USDC' }, { ...USDC_TOKEN, chainId: 10 });

describe('the seller leg handed back as payment headers (DESIGN §5 "Purchase")', () => {
  it('writes byte for byte the documents stringified whole, on both lanes, with or without a reference', () => {
    fc.assert(
      fc.property(fc.constantFrom('USDC' as const, 'ANM' as const), payloads, fc.string({ minLength: 1 }), fc.bigInt({ min: 1n, max: 10n ** 30n }), fc.option(fc.string(), { nil: undefined }), tokens, fc.constantFrom<1 | 2>(1, 2), (asset, payload, payTo, amount, reference, token, version) => {
          const seller = { payTo, amount: amount.toString(), ...(reference !== undefined && { reference }) };
          expect(paymentHeaders(asset, payload, seller, token, version)).toEqual(wholeDocuments(asset, payload, seller, token, version));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('decodes back to the payload it carries', () => {
    const payload = { signature: '0xab', authorization: { from: '0x01', nonce: '0x02' } };
    const h = paymentHeaders('USDC', payload, { payTo: '0x03', amount: '10' });
    expect(decodeLeg(h.value)?.payload).toEqual(payload);
    expect(fromBase64Json(h.v1!.value)).toEqual({ x402Version: 1, scheme: 'exact', network: 'base', payload });
  });

  it('names the header of the seller\'s x402 version: X-PAYMENT with the v1 value for a v1 seller, PAYMENT-SIGNATURE otherwise', () => {
    const payload = { signature: '0xab', authorization: { from: '0x01', nonce: '0x02' } };
    const v1 = paymentHeaders('USDC', payload, { payTo: '0x03', amount: '10' }, USDC_TOKEN, 1);
    expect([v1.header, v1.value, v1.x402_version]).toEqual(['X-PAYMENT', v1.v1!.value, 1]);
    expect(v1.v2.header).toBe('PAYMENT-SIGNATURE');
    const v2 = paymentHeaders('USDC', payload, { payTo: '0x03', amount: '10' }, USDC_TOKEN, 2);
    expect([v2.header, v2.value, v2.x402_version]).toEqual(['PAYMENT-SIGNATURE', v2.v2.value, 2]);
    // x402 v1 has no name for native:1: an ANM leg is a v2 payment whatever the seller's version.
    const anm = paymentHeaders('ANM', payload, { payTo: 'anm1x', amount: '10', reference: 'mp1:pi_x:seller' }, USDC_TOKEN, 1);
    expect([anm.header, anm.x402_version, anm.v1]).toEqual(['PAYMENT-SIGNATURE', 2, null]);
  });
});
