/**
 * The seller's `exact-anm` scheme for `@x402/core`'s x402ResourceServer (and so for
 * `@x402/express`'s paymentMiddleware): prices in ANM on `native:1`, requirements passed
 * through as they are, verification and settlement left to a facilitator that supports
 * `exact-anm` (the marketplace's): `new x402ResourceServer(facilitator).register('native:1',
 * new ExactAnmServerScheme())`. Typed structurally, so the project does not depend on the
 * SDK at run time.
 */
import { MARKET_LANES, parseAtomicDecimal } from '../../../machines/money/market.ts';
import { findAnmAsset } from '../client/anm-wallet.ts';

type Price = string | number | { amount: string; asset?: string; extra?: Record<string, unknown> };

export class ExactAnmServerScheme {
  readonly scheme = MARKET_LANES.ANM.legScheme;
  /** A signed transfer is the only way an ANM payment moves: no asset transfer method to choose. */
  readonly defaultAssetTransferMethod = 'default';
  /** Verified before the handler, settled (submitted, then in a block) after it. */
  readonly paymentFlows = { default: { supported: ['authorization'], default: 'authorization' } } as const;

  getAssetDecimals(asset: string, network: string): number | undefined {
    return findAnmAsset(asset, network)?.decimals;
  }

  /** `"0.25"`, `"0.25 ANM"` or `0.25` ANM, or `{amount: "<nANM>"}` as it is. */
  parsePrice(price: Price, network: string): Promise<{ amount: string; asset: string; extra: Record<string, unknown> }> {
    if (network !== MARKET_LANES.ANM.network) return Promise.reject(new Error(`exact-anm is priced on ${MARKET_LANES.ANM.network}, not ${network}`));
    if (typeof price === 'object') return Promise.resolve({ amount: price.amount, asset: price.asset ?? 'ANM', extra: price.extra ?? {} });
    const text = String(price).trim().replace(/\s*ANM$/i, '');
    const amount = parseAtomicDecimal('ANM', text);
    if (amount === null || amount <= 0n) return Promise.reject(new Error(`not an ANM price: ${String(price)}`));
    return Promise.resolve({ amount: amount.toString(), asset: 'ANM', extra: {} });
  }

  enhancePaymentRequirements<R>(requirements: R): Promise<R> {
    return Promise.resolve(requirements);
  }
}
