/**
 * A seller's side of `POST /api/v1/resources` (DESIGN §5 "Listings"): the body's signatures,
 * each over the RFC 8785 JSON of the body without `signatures`, by the key that controls the
 * asset's `pay_to`: EIP-191 `personal_sign` for USDC, ML-DSA-65 (listing context) for ANM.
 */
import { mlDsaSign } from '../../../machines/chain/index.ts';
import type { EvmSigner } from './exact-split-evm.ts';
import { LISTING_SIGNATURE_CONTEXT, listingMessage } from '../listing-signature.ts';

export interface ListingKeys {
  /** Signs for `pay_to.USDC` (a viem local account). */
  evm?: Pick<EvmSigner, 'address'> & { signMessage(args: { message: string }): Promise<`0x${string}`> };
  /** Signs for `pay_to.ANM`. */
  anm?: { publicKey: Uint8Array; secretKey: Uint8Array };
}

/** The body with `signatures` for every asset named in its `pay_to`. */
export async function signListing(fields: Record<string, unknown>, keys: ListingKeys): Promise<Record<string, unknown>> {
  const message = listingMessage(fields);
  const payTo = (fields.pay_to ?? {}) as Record<string, string | undefined>;
  const signatures: Record<string, unknown> = {};
  if (payTo.USDC) {
    if (!keys.evm) throw new Error('pay_to.USDC needs the EVM key that controls it');
    signatures.USDC = await keys.evm.signMessage({ message });
  }
  if (payTo.ANM) {
    if (!keys.anm) throw new Error('pay_to.ANM needs the ANM key that controls it');
    const sig = mlDsaSign(new TextEncoder().encode(message), keys.anm.secretKey, LISTING_SIGNATURE_CONTEXT);
    signatures.ANM = { public_key: Buffer.from(keys.anm.publicKey).toString('base64'), signature: Buffer.from(sig).toString('base64') };
  }
  return { ...fields, signatures };
}
