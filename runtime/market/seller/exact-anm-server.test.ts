/**
 * The seller's `exact-anm` price parsing for `@x402/core`'s x402ResourceServer (DESIGN §5
 * "Money": ANM in nANM, 9 decimals; marketplace.md "Payment lanes": `native:1` only).
 */
import { describe, expect, it } from 'vitest';
import { ExactAnmServerScheme } from './exact-anm-server.ts';

const scheme = new ExactAnmServerScheme();

describe('ExactAnmServerScheme', () => {
  it('reads decimal ANM prices as nANM and passes an atomic amount through', async () => {
    expect(await scheme.parsePrice('0.01', 'native:1')).toEqual({ amount: '10000000', asset: 'ANM', extra: {} });
    expect(await scheme.parsePrice('1.5 ANM', 'native:1')).toEqual({ amount: '1500000000', asset: 'ANM', extra: {} });
    expect(await scheme.parsePrice({ amount: '42', asset: 'ANM' }, 'native:1')).toEqual({ amount: '42', asset: 'ANM', extra: {} });
    expect(scheme.getAssetDecimals('ANM', 'native:1')).toBe(9);
  });

  it('refuses other networks (never eip155:1), other assets, zero and sub-nANM amounts', async () => {
    await expect(scheme.parsePrice('0.01', 'eip155:1')).rejects.toThrow(/native:1 only/);
    await expect(scheme.parsePrice({ amount: '42', asset: 'USDC' }, 'native:1')).rejects.toThrow(/asset "ANM"/);
    await expect(scheme.parsePrice({ amount: '0', asset: 'ANM' }, 'native:1')).rejects.toThrow();
    await expect(scheme.parsePrice('0', 'native:1')).rejects.toThrow();
    await expect(scheme.parsePrice('0.0000000001', 'native:1')).rejects.toThrow(/9 decimal places/);
    expect(scheme.getAssetDecimals('ANM', 'eip155:8453')).toBeUndefined();
  });
});
