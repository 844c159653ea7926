/**
 * Regenerates test/vectors/chain.json: `npx tsx runtime/chain/codec/gen-vectors.ts`.
 * Only run when the encoding deliberately changes; the vectors are the specification.
 */
import { writeFile } from 'node:fs/promises';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
  NETWORKS,
  addressFromPublicKey,
  encodeSignedTx,
  keypairFromSeed,
  paymentReference,
  refundReference,
  signTx,
  signingBytes,
  txHash,
  verifyTx,
  type Transaction,
} from '../../../machines/chain/index.ts';
import { VECTOR_REFERENCE_BYTES, VECTOR_SEEDS } from './vector-cases.ts';

const hex = bytesToHex;
const keys = Object.fromEntries(
  Object.entries(VECTOR_SEEDS).map(([name, seed]) => {
    const kp = keypairFromSeed(seed);
    return [name, { seed, ...kp }];
  }),
) as Record<keyof typeof VECTOR_SEEDS, { seed: Uint8Array; publicKey: Uint8Array; secretKey: Uint8Array }>;

const keypairs = Object.entries(keys).map(([name, k]) => ({
  name,
  seed: hex(k.seed),
  public_key: hex(k.publicKey),
  public_key_sha256: hex(sha256(k.publicKey)),
  secret_key_sha256: hex(sha256(k.secretKey)),
  address_live: addressFromPublicKey(k.publicKey, NETWORKS.live.hrp),
  address_test: addressFromPublicKey(k.publicKey, NETWORKS.test.hrp),
}));

function txVector(name: string, network: 'live' | 'test', tx: Transaction) {
  const signed = signTx(tx, keys.payer.secretKey);
  const check = verifyTx(signed, NETWORKS[network]);
  if (!check.ok) throw check.error;
  const sb = signingBytes(tx);
  return {
    name,
    network,
    signer: 'payer',
    tx: {
      chain_id: tx.chain_id,
      from_public_key_sha256: hex(sha256(tx.from_public_key)),
      nonce: tx.nonce.toString(),
      outputs: tx.outputs.map((o) => ({ to: o.to, amount: o.amount.toString() })),
      reference: tx.reference,
      fee: tx.fee.toString(),
    },
    signing_bytes: hex(sb),
    signing_bytes_sha256: hex(sha256(sb)),
    signature_sha256: hex(sha256(signed.signature)),
    signed_tx: encodeSignedTx(signed),
    tx_hash: txHash(signed),
    from: check.from,
  };
}

const pay = paymentReference(VECTOR_REFERENCE_BYTES);
const refund = refundReference(VECTOR_REFERENCE_BYTES);
const addr = (k: keyof typeof keys, n: 'live' | 'test') => addressFromPublicKey(keys[k].publicKey, NETWORKS[n].hrp);

const vectors = {
  description: 'ANM chain codec vectors; see docs/chain.md. Signatures are deterministic (ML-DSA-65, rnd = 32 zero bytes, ctx "ANM-TX-v1").',
  networks: NETWORKS,
  keypairs,
  references: [
    { kind: 'payment', bytes: hex(VECTOR_REFERENCE_BYTES), reference: pay },
    { kind: 'refund', bytes: hex(VECTOR_REFERENCE_BYTES), reference: refund },
  ],
  transactions: [
    txVector('live payment: merchant + protocol fee, 1 ANM', 'live', {
      chain_id: 1,
      from_public_key: keys.payer.publicKey,
      nonce: 7n,
      outputs: [
        { to: addr('merchant', 'live'), amount: 980_000_000n },
        { to: addr('treasury', 'live'), amount: 20_000_000n },
      ],
      reference: pay,
      fee: 1_000n,
    }),
    txVector('test-network refund, no fee', 'test', {
      chain_id: 1001,
      from_public_key: keys.payer.publicKey,
      nonce: 0n,
      outputs: [{ to: addr('merchant', 'test'), amount: 1n }],
      reference: refund,
      fee: 0n,
    }),
  ],
};

const out = new URL('../../../test/vectors/chain.json', import.meta.url);
await writeFile(out, JSON.stringify(vectors, null, 2) + '\n');
console.log(`wrote ${out.pathname}`);
