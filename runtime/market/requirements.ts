/**
 * x402 v2 PaymentRequirements of the marketplace's lanes, in the SDK's shape (`@x402/core`
 * types: scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra).
 */
import { MARKET_LANES, USDC_TOKEN, type MarketAsset } from '../../machines/money/market.ts';
import type { UsdcToken } from './lanes/usdc-ledger.ts';

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

/** The token named in `asset`: the USDC lane's contract (USDC on Base unless configured), or `ANM` for the native coin. */
export function assetId(asset: MarketAsset, token: UsdcToken = USDC_TOKEN): string {
  return asset === 'USDC' ? token.address : 'ANM';
}

/** EIP-712 domain hints the SDK's EVM schemes read from `extra`. */
export function laneExtra(asset: MarketAsset, token: UsdcToken = USDC_TOKEN): Record<string, unknown> {
  return asset === 'USDC' ? { name: token.name, version: token.version } : {};
}

/** One plain payment of `amount` to `payTo` (`exact` / `exact-anm`): a single leg. */
export function legRequirement(asset: MarketAsset, payTo: string, amount: bigint, timeoutS = DEFAULT_TIMEOUT_S, token: UsdcToken = USDC_TOKEN): PaymentRequirements {
  return {
    scheme: MARKET_LANES[asset].legScheme,
    network: MARKET_LANES[asset].network,
    asset: assetId(asset, token),
    amount: amount.toString(),
    payTo,
    maxTimeoutSeconds: timeoutS,
    extra: laneExtra(asset, token),
  };
}
