/**
 * The two legs `anmpay market buy` sends for a quote's requirements, made by the project's
 * own x402 client schemes exactly as an agent using `@x402/core` would make them: USDC, both
 * EIP-3009 authorizations signed with viem (`ExactSplitEvmScheme`); ANM, both transfers signed
 * with the wallet's ML-DSA-65 key at its next nonces on the live chain (`ExactAnmSplitScheme`,
 * nonces read from ANMPAY_DEVNET_URL's /live node).
 */
import type { PrivateKeyAccount } from 'viem/accounts';
import type { Wallet } from '../chain/codec/keys.ts';
import { anmWallet, type AnmWallet } from '../market/client/anm-wallet.ts';
import { ExactAnmSplitScheme } from '../market/client/exact-anm-split.ts';
import { ExactSplitEvmScheme } from '../market/client/exact-split-evm.ts';
import { rpcFor } from './env.ts';

export type BuyerSigner = { asset: 'USDC'; evm: PrivateKeyAccount } | { asset: 'ANM'; anm: Wallet };

interface Requirements {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

/**
 * The wallet's signer on the live chain. `nonce` pins its next nonce: `market execute` signs
 * the seller transfer and the fee leg from one reading, so the fee always comes right after.
 */
export function liveWallet(keys: Wallet, nonce?: bigint): AnmWallet {
  const w = anmWallet(keys, rpcFor('live'));
  return nonce === undefined ? w : { ...w, nextNonce: () => Promise.resolve(nonce) };
}

export async function legsFor(signer: BuyerSigner, req: Requirements, wallet?: AnmWallet): Promise<{ seller: unknown; fee: unknown }> {
  const { payload } =
    signer.asset === 'USDC'
      ? await new ExactSplitEvmScheme(signer.evm).createPaymentPayload(2, req)
      : await new ExactAnmSplitScheme(wallet ?? liveWallet(signer.anm)).createPaymentPayload(2, req);
  return payload.legs as { seller: unknown; fee: unknown };
}
