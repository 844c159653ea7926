/** Shared test fixtures for machines/chain tests (not a test file itself). */
import { addressFromPublicKey, NETWORKS } from './address.ts';
import { keypairFromSeed } from './mldsa.ts';
import { paymentReference } from './reference.ts';
import type { Transaction } from './tx.ts';

export const seq = (n: number, start = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (start + i) & 0xff);

export const payer = keypairFromSeed(seq(32, 0));
export const other = keypairFromSeed(seq(32, 0x80));
export const merchantLive = addressFromPublicKey(keypairFromSeed(seq(32, 0x20)).publicKey, NETWORKS.live.hrp);
export const treasuryLive = addressFromPublicKey(keypairFromSeed(seq(32, 0x40)).publicKey, NETWORKS.live.hrp);
export const merchantTest = addressFromPublicKey(keypairFromSeed(seq(32, 0x20)).publicKey, NETWORKS.test.hrp);

export function paymentTx(overrides: Partial<Transaction> = {}): Transaction {
  return {
    chain_id: 1,
    from_public_key: payer.publicKey,
    nonce: 7n,
    outputs: [
      { to: merchantLive, amount: 980_000_000n },
      { to: treasuryLive, amount: 20_000_000n },
    ],
    reference: paymentReference(seq(20)),
    fee: 1_000n,
    ...overrides,
  };
}
