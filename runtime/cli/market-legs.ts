/**
 * The two legs `anmpay market buy` sends for a quote's requirements. USDC: both EIP-3009
 * authorizations signed with viem by the project's own x402 client scheme
 * (`ExactSplitEvmScheme`), exactly as an agent using `@x402/core` would make them. ANM: this
 * build has no client scheme for `exact-anm-split` yet, so the legs name what they would pay
 * and carry no signed transfer; the marketplace's refusal is what the user is shown.
 */
import type { PrivateKeyAccount } from 'viem/accounts';
import type { Wallet } from '../chain/codec/keys.ts';
import { ExactSplitEvmScheme } from '../market/client/exact-split-evm.ts';
import { legRequirement } from '../market/requirements.ts';

export type BuyerSigner = { asset: 'USDC'; evm: PrivateKeyAccount } | { asset: 'ANM'; anm: Wallet };

interface Requirements {
  scheme: string;
  network: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

export async function legsFor(signer: BuyerSigner, req: Requirements): Promise<{ seller: unknown; fee: unknown }> {
  if (signer.asset === 'USDC') {
    const { payload } = await new ExactSplitEvmScheme(signer.evm).createPaymentPayload(2, req);
    return payload.legs as { seller: unknown; fee: unknown };
  }
  const legs = req.extra.legs as Record<'seller' | 'fee', { payTo: string; amount: string }>;
  const unsigned = (leg: 'seller' | 'fee') => ({ x402Version: 2, accepted: legRequirement('ANM', legs[leg].payTo, BigInt(legs[leg].amount), req.maxTimeoutSeconds), payload: null });
  return { seller: unsigned('seller'), fee: unsigned('fee') };
}
