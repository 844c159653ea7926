import canonicalizeCjs from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { hashMessage } from 'viem';
import { addressFromPublicKey, NETWORKS } from '../../machines/chain/index.ts';
import { asciiToBytes } from '../../machines/chain/bytes.ts';
import type { MarketAsset } from '../../machines/money/market.ts';
import { verifySignature } from '../chain/codec/verify.ts';
import { strictBase64 } from '../strict-base64.ts';
import { MarketRefusal } from './errors.ts';
import { recoverSigner } from './evm-recover.ts';
import type { ListingBody } from './listing-input.ts';

// The package is CommonJS (`module.exports = fn`) while its typings declare an ES default.
const canonicalize = canonicalizeCjs as unknown as (value: unknown) => string | undefined;

/** FIPS 204 context of a listing signature, so it can never pass for a transaction's. */
export const LISTING_SIGNATURE_CONTEXT = asciiToBytes('ANM-MARKET-LISTING-v1');

/** What the seller signs: RFC 8785 JSON of the body without `signatures`. */
export function listingMessage(raw: Record<string, unknown>): string {
  const { signatures: _omit, ...signed } = raw;
  const text = canonicalize(signed);
  if (text === undefined) throw new MarketRefusal('invalid_body', 'the body has no canonical JSON form');
  return text;
}

const hex = (s: string, n = 32): string => bytesToHex(sha256(utf8ToBytes(s))).slice(0, n);

/** A resource id's form as the routes read it: longer ids are none the service issues. */
export const RESOURCE_ID_FORM = /^res_[0-9a-f]{1,64}$/;

/** `res_` + hex of a hash of (method, endpoint): one listing per seller endpoint. */
export function resourceIdOf(method: string, endpoint: string): string {
  return `res_${hex(`${method.toUpperCase()} ${endpoint}`)}`;
}

/** A signing key, named so that keys of the two lanes can never collide. */
export type SigningKey = { lane: 'eip155'; address: string } | { lane: 'mldsa65'; publicKey: string };

/** `prov_` + hex of a hash of the signing key. */
export function providerIdOf(key: SigningKey): string {
  return `prov_${hex(key.lane === 'eip155' ? `eip155:${key.address.toLowerCase()}` : `mldsa65:${key.publicKey}`)}`;
}

/**
 * Checks the signature of each priced asset by the key that controls its `pay_to`
 * (EIP-191 personal_sign for USDC, ML-DSA-65 for ANM) and returns the primary asset's key.
 */
export async function verifyListingSignatures(raw: Record<string, unknown>, body: ListingBody, assets: readonly MarketAsset[]): Promise<SigningKey> {
  const message = listingMessage(raw);
  const keys: SigningKey[] = [];
  for (const asset of assets) {
    const payTo = body.pay_to[asset];
    if (!payTo) throw new MarketRefusal('invalid_body', `pay_to.${asset} is required for a listing priced in ${asset}`);
    if (asset === 'USDC') {
      const sig = body.signatures.USDC;
      if (!sig) throw new MarketRefusal('invalid_listing_signature', 'signatures.USDC is missing');
      const signer = recoverSigner(hashMessage(message), sig);
      if (!signer || signer.toLowerCase() !== payTo.toLowerCase()) {
        throw new MarketRefusal('invalid_listing_signature', 'signatures.USDC is not a personal_sign of the listing by pay_to.USDC');
      }
      keys.push({ lane: 'eip155', address: signer.toLowerCase() });
    } else {
      const s = body.signatures.ANM;
      const pk = s ? strictBase64(s.public_key) : null;
      const sig = s ? strictBase64(s.signature) : null;
      if (!s || !pk || !sig) throw new MarketRefusal('invalid_listing_signature', 'signatures.ANM needs base64 public_key and signature');
      let controls = false;
      try {
        controls = addressFromPublicKey(pk, NETWORKS.live.hrp) === payTo;
      } catch {
        controls = false;
      }
      if (!controls) throw new MarketRefusal('invalid_listing_signature', 'signatures.ANM.public_key does not control pay_to.ANM');
      if (!verifySignature(pk, utf8ToBytes(message), sig, LISTING_SIGNATURE_CONTEXT)) {
        throw new MarketRefusal('invalid_listing_signature', 'signatures.ANM does not verify over the listing');
      }
      keys.push({ lane: 'mldsa65', publicKey: s.public_key });
    }
  }
  const primary = keys[0];
  if (!primary) throw new MarketRefusal('invalid_body', 'a listing needs a priced asset');
  return primary;
}
