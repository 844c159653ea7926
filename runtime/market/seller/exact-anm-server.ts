/**
 * The seller's side of `exact-anm` on `native:1` for `@x402/core`'s x402ResourceServer:
 * `server.register('native:1', new ExactAnmServerScheme())` lets a stock `@x402/express`
 * seller price a route in ANM next to USDC. It only states the requirement (amount in nANM,
 * asset `ANM`); verifying and settling the buyer's signed transfer is the facilitator's work
 * (runtime/market/facilitator-anm.ts).
 */
import type { AssetAmount, Network, PaymentRequirements, Price, SchemeNetworkServer } from '@x402/core/types';
import { MARKET_ASSETS, MARKET_LANES, parseAtomicDecimal } from '../../../machines/money/market.ts';

const ASSET = 'ANM';

export class ExactAnmServerScheme implements SchemeNetworkServer {
  readonly scheme = MARKET_LANES.ANM.legScheme;
  // An ANM transfer has one way to move the asset; the SDK's name for "none on the wire".
  readonly defaultAssetTransferMethod = 'default';
  // Verified before the handler runs, settled (the transfer submitted) only after it answered below 400.
  readonly paymentFlows = { default: { supported: ['authorization'] as const, default: 'authorization' as const } };

  getAssetDecimals(asset: string, network: Network): number | undefined {
    return network === MARKET_LANES.ANM.network && asset === ASSET ? MARKET_ASSETS.ANM.decimals : undefined;
  }

  /** `{amount, asset: 'ANM'}` in nANM as given, or a decimal ANM amount (`"0.01"`, `"0.01 ANM"`). */
  async parsePrice(price: Price, network: Network): Promise<AssetAmount> {
    if (network !== MARKET_LANES.ANM.network) throw new Error(`exact-anm is served on ${MARKET_LANES.ANM.network} only, not ${network}`);
    if (typeof price === 'object' && price !== null && 'amount' in price) {
      if (price.asset !== ASSET || !/^[1-9][0-9]*$/.test(price.amount)) throw new Error('an exact-anm price is a positive integer amount of nANM with asset "ANM"');
      return { amount: price.amount, asset: ASSET, extra: price.extra ?? {} };
    }
    const text = String(price).trim().replace(/\s*ANM$/i, '');
    const atomic = parseAtomicDecimal('ANM', text);
    if (atomic === null) throw new Error(`${JSON.stringify(price)} is not a positive ANM amount with at most 9 decimal places`);
    return { amount: atomic.toString(), asset: ASSET, extra: {} };
  }

  async enhancePaymentRequirements(requirements: PaymentRequirements): Promise<PaymentRequirements> {
    return requirements;
  }
}
