/**
 * x402 v2 PaymentRequirements of the marketplace's lanes, in the SDK's shape (`@x402/core`
 * types: scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra).
 */
import { MARKET_LANES, USDC_TOKEN, evmNetwork, type MarketAsset } from '../../machines/money/market.ts';
import type { SellerOffer } from '../../machines/money/seller-offer.ts';
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

/** The lane's network id: the USDC token's chain (`eip155:8453` unless USDC_NETWORK says otherwise), or `native:1`. */
export function laneNetwork(asset: MarketAsset, token: UsdcToken = USDC_TOKEN): `${string}:${string}` {
  return asset === 'USDC' ? evmNetwork(token.chainId) : MARKET_LANES.ANM.network;
}

/** x402 v1 names EVM networks by name, not CAIP-2: those the USDC lane may be on. */
const V1_EVM_NETWORKS: Readonly<Record<string, number>> = { base: 8453, 'base-sepolia': 84532 };

/** A v1 network name read as CAIP-2 (`base` → `eip155:8453`); anything else as it is. */
export function fromV1Network(network: unknown): unknown {
  const chainId = typeof network === 'string' && Object.hasOwn(V1_EVM_NETWORKS, network) ? V1_EVM_NETWORKS[network] : undefined;
  return chainId === undefined ? network : evmNetwork(chainId);
}

/** The v1 name of the USDC lane's chain, or undefined when v1 has none for it (no v1 payments then). */
export function v1NetworkName(token: UsdcToken = USDC_TOKEN): string | undefined {
  return Object.keys(V1_EVM_NETWORKS).find((name) => V1_EVM_NETWORKS[name] === token.chainId);
}

/** EIP-712 domain hints the SDK's EVM schemes read from `extra`. */
export function laneExtra(asset: MarketAsset, token: UsdcToken = USDC_TOKEN): Record<string, unknown> {
  return asset === 'USDC' ? { name: token.name, version: token.version } : {};
}

/** One plain payment of `amount` to `payTo` (`exact` / `exact-anm`): a single leg. */
export function legRequirement(asset: MarketAsset, payTo: string, amount: bigint, timeoutS = DEFAULT_TIMEOUT_S, token: UsdcToken = USDC_TOKEN): PaymentRequirements {
  return {
    scheme: MARKET_LANES[asset].legScheme,
    network: laneNetwork(asset, token),
    asset: assetId(asset, token),
    amount: amount.toString(),
    payTo,
    maxTimeoutSeconds: timeoutS,
    extra: laneExtra(asset, token),
  };
}

/**
 * The seller leg as the seller's own requirements (ADR 0091): `offer`, the seller's 402 as
 * the scanner read it, gives payTo and the token as the seller spells them, its
 * maxTimeoutSeconds and its `extra`, which a stock seller compares the payment's `accepted`
 * against; without one (never probed), the listing's payTo and the lane's defaults.
 */
export function sellerRequirement(asset: MarketAsset, payTo: string, amount: bigint, offer: SellerOffer | undefined, token: UsdcToken = USDC_TOKEN): PaymentRequirements {
  const r = legRequirement(asset, offer?.pay_to ?? payTo, amount, offer?.max_timeout_seconds ?? DEFAULT_TIMEOUT_S, token);
  return offer ? { ...r, asset: offer.asset_id, extra: offer.extra ?? r.extra } : r;
}
