/**
 * The `exact-anm-split` test vector printed in docs/marketplace.md ("The ANM lane"): rebuilt
 * from its seed with deterministic ML-DSA-65 signing, every field must match what the page
 * says, the legs must pass the lane's own checks against their requirements, and the client
 * scheme must sign the same transfers (hedged signatures aside).
 */
import { readFileSync } from 'node:fs';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { addressFromPublicKey, decodeSignedTx, encodeSignedTx, keypairFromSeed, signTx, signingBytes, txHash } from '../../machines/chain/index.ts';
import { asExactAnmPayload, checkTransfer } from '../../runtime/market/lanes/anm-leg.ts';
import { ExactAnmSplitScheme } from '../../runtime/market/client/exact-anm-split.ts';

interface VectorLeg {
  payTo: string;
  amount: string;
  nonce: string;
  reference: string;
  signing_bytes_sha256: string;
  signed_bytes: number;
  tx_hash: string;
}
interface Vector {
  buyer_seed: string;
  buyer: string;
  intent_id: string;
  chain_fee: string;
  seller: VectorLeg;
  fee: VectorLeg;
}

const page = readFileSync(new URL('../../docs/marketplace.md', import.meta.url), 'utf8');
const block = /<!-- vector:exact-anm-split -->\n```json\n([\s\S]*?)\n```/.exec(page);
const v = JSON.parse(block?.[1] ?? 'null') as Vector;
const buyer = keypairFromSeed(hexToBytes(v.buyer_seed));
const LEGS = ['seller', 'fee'] as const;

describe('docs/marketplace.md exact-anm-split test vector', () => {
  it('the payer and the payees are the seeds’ live addresses', () => {
    expect(addressFromPublicKey(buyer.publicKey, 'anm')).toBe(v.buyer);
    expect(addressFromPublicKey(keypairFromSeed(new Uint8Array(32).fill(2)).publicKey, 'anm')).toBe(v.seller.payTo);
    expect(addressFromPublicKey(keypairFromSeed(new Uint8Array(32).fill(3)).publicKey, 'anm')).toBe(v.fee.payTo);
  });

  it.each(LEGS)('%s leg: signing bytes, signed size and hash; it passes the lane’s checks', (name) => {
    const l = v[name];
    expect(l.reference).toBe(`mp1:${v.intent_id}:${name}`);
    const tx = { chain_id: 1, from_public_key: buyer.publicKey, nonce: BigInt(l.nonce), outputs: [{ to: l.payTo, amount: BigInt(l.amount) }], reference: l.reference, fee: BigInt(v.chain_fee) };
    expect(bytesToHex(sha256(signingBytes(tx)))).toBe(l.signing_bytes_sha256);
    const hex = encodeSignedTx(signTx(tx, buyer.secretKey));
    expect(hex.length / 2).toBe(l.signed_bytes);
    expect(bytesToHex(sha256(hexToBytes(hex)))).toBe(l.tx_hash);
    const c = checkTransfer(asExactAnmPayload({ transaction: hex })!, { scheme: 'exact-anm', payTo: l.payTo, amount: BigInt(l.amount), reference: l.reference }, 0);
    expect(c.ok && { payer: c.transfer.payer, hash: c.transfer.hash }).toEqual({ payer: v.buyer, hash: l.tx_hash });
  });

  it('ExactAnmSplitScheme signs the same transfers from the quote’s requirements', async () => {
    const wallet = { ...buyer, fee: BigInt(v.chain_fee), nextNonce: () => Promise.resolve(BigInt(v.seller.nonce)) };
    const requirements = {
      scheme: 'exact-anm-split', network: 'native:1', amount: String(BigInt(v.seller.amount) + BigInt(v.fee.amount)), payTo: v.seller.payTo, maxTimeoutSeconds: 300,
      extra: { intent_id: v.intent_id, legs: { seller: { payTo: v.seller.payTo, amount: v.seller.amount, reference: v.seller.reference }, fee: { payTo: v.fee.payTo, amount: v.fee.amount, reference: v.fee.reference } } },
    };
    const { payload } = await new ExactAnmSplitScheme(wallet).createPaymentPayload(2, requirements);
    const legs = payload.legs as Record<(typeof LEGS)[number], { accepted: Record<string, unknown>; payload: { transaction: string } }>;
    for (const name of LEGS) {
      const l = v[name];
      expect(legs[name].accepted).toMatchObject({ scheme: 'exact-anm', network: 'native:1', asset: 'ANM', payTo: l.payTo, amount: l.amount, extra: { reference: l.reference } });
      const { signature, ...fields } = decodeSignedTx(legs[name].payload.transaction);
      const deterministic = signTx({ ...fields }, buyer.secretKey);
      expect(signature).toHaveLength(deterministic.signature.length);
      expect(txHash({ ...fields, signature: deterministic.signature })).toBe(l.tx_hash);
    }
  });
});
