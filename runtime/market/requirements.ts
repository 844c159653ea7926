/**
 * x402 v2 PaymentRequirements of the marketplace's lanes, in the SDK's shape (`@x402/core`
 * types: scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra).
 */
import { MARKET_LANES, USDC_TOKEN, type MarketAsset } from '../../machines/money/market.ts';

export interface PaymentRequirements {
  scheme: string;
  network: `${string}:${string}`;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

export const DEFAULT_TIMEOUT_S = 300;

/** The token named in `asset`: the USDC contract, or `ANM` for the native coin. */
export function assetId(asset: MarketAsset): string {
  return asset === 'USDC' ? USDC_TOKEN.address : 'ANM';
}

/** EIP-712 domain hints the SDK's EVM schemes read from `extra`. */
export function laneExtra(asset: MarketAsset): Record<string, unknown> {
  return asset === 'USDC' ? { name: USDC_TOKEN.name, version: USDC_TOKEN.version } : {};
}

/** One plain payment of `amount` to `payTo` (`exact` / `exact-anm`): a single leg. */
export function legRequirement(asset: MarketAsset, payTo: string, amount: bigint, timeoutS = DEFAULT_TIMEOUT_S): PaymentRequirements {
  return {
    scheme: MARKET_LANES[asset].legScheme,
    network: MARKET_LANES[asset].network,
    asset: assetId(asset),
    amount: amount.toString(),
    payTo,
    maxTimeoutSeconds: timeoutS,
    extra: laneExtra(asset),
  };
}
