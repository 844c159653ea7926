/** Checks test/vectors/chain.json, the vectors printed in docs/chain.md. */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import vectors from '../../test/vectors/chain.json' with { type: 'json' };
import { NETWORKS, addressFromPublicKey } from './address.ts';
import { keypairFromSeed } from './mldsa.ts';
import { decodeReference, paymentReference, refundReference } from './reference.ts';
import { decodeSignedTx, encodeSignedTx, signTx, signingBytes, txHash, verifyTx, type Transaction } from './tx.ts';

const keypair = (name: string) => {
  const v = vectors.keypairs.find((k) => k.name === name);
  if (!v) throw new Error(`no keypair ${name} in vectors`);
  return keypairFromSeed(hexToBytes(v.seed));
};

describe('chain test vectors (docs/chain.md §Test vectors)', () => {
  it('networks', () => {
    expect(vectors.networks).toEqual(NETWORKS);
  });

  it.each(vectors.keypairs)('keypair $name: seed → ML-DSA-65 keys → addresses', (v) => {
    const kp = keypairFromSeed(hexToBytes(v.seed));
    expect(bytesToHex(kp.publicKey)).toBe(v.public_key);
    expect(bytesToHex(sha256(kp.publicKey))).toBe(v.public_key_sha256);
    expect(bytesToHex(sha256(kp.secretKey))).toBe(v.secret_key_sha256);
    expect(addressFromPublicKey(kp.publicKey, 'anm')).toBe(v.address_live);
    expect(addressFromPublicKey(kp.publicKey, 'tanm')).toBe(v.address_test);
  });

  it.each(vectors.references)('$kind reference', (v) => {
    const make = v.kind === 'payment' ? paymentReference : refundReference;
    expect(make(hexToBytes(v.bytes))).toBe(v.reference);
    expect(decodeReference(v.reference)).toEqual({ kind: v.kind, bytes: hexToBytes(v.bytes) });
  });

  it.each(vectors.transactions)('transaction: $name', (v) => {
    const kp = keypair(v.signer);
    const tx: Transaction = {
      chain_id: v.tx.chain_id,
      from_public_key: kp.publicKey,
      nonce: BigInt(v.tx.nonce),
      outputs: v.tx.outputs.map((o) => ({ to: o.to, amount: BigInt(o.amount) })),
      reference: v.tx.reference,
      fee: BigInt(v.tx.fee),
    };
    expect(bytesToHex(sha256(tx.from_public_key))).toBe(v.tx.from_public_key_sha256);
    const sb = signingBytes(tx);
    expect(bytesToHex(sb)).toBe(v.signing_bytes);
    expect(bytesToHex(sha256(sb))).toBe(v.signing_bytes_sha256);
    // Deterministic ML-DSA-65 (rnd = 0^32): the same signature every time.
    const signed = signTx(tx, kp.secretKey);
    expect(bytesToHex(sha256(signed.signature))).toBe(v.signature_sha256);
    expect(encodeSignedTx(signed)).toBe(v.signed_tx);
    expect(txHash(signed)).toBe(v.tx_hash);
    expect(decodeSignedTx(v.signed_tx)).toEqual(signed);
    const network = NETWORKS[v.network as keyof typeof NETWORKS];
    const r = verifyTx(v.signed_tx, network);
    expect(r.ok && { hash: r.hash, from: r.from }).toEqual({ hash: v.tx_hash, from: v.from });
  });
});
