/**
 * Measures ML-DSA-65 verifications per second of the runtime's backend:
 *   npx tsx runtime/chain/codec/verify-speed.ts [seconds]
 * Numbers go into docs/adr/0003-ml-dsa-backend.md.
 */
import { NETWORKS, addressFromPublicKey, paymentReference, signTx, signingBytes, type Transaction } from '../../../machines/chain/index.ts';
import { walletFromSeed } from './keys.ts';
import { verifyBackendName, verifySignature, verifyTransaction } from './verify.ts';

const seconds = Number(process.argv[2] ?? 3);
const payer = walletFromSeed(new Uint8Array(32), 'live');
const to = addressFromPublicKey(walletFromSeed(new Uint8Array(32).fill(1), 'live').publicKey, NETWORKS.live.hrp);
const tx: Transaction = {
  chain_id: 1,
  from_public_key: payer.publicKey,
  nonce: 1n,
  outputs: [{ to, amount: 980_000_000n }, { to, amount: 20_000_000n }],
  reference: paymentReference(new Uint8Array(20)),
  fee: 1000n,
};
const signed = signTx(tx, payer.secretKey);
const msg = signingBytes(tx);

function rate(name: string, fn: () => boolean): number {
  for (let i = 0; i < 20; i++) if (!fn()) throw new Error(`${name}: warm-up verify failed`);
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < seconds * 1000) {
    if (!fn()) throw new Error(`${name}: verify failed`);
    n++;
    if (n % 16 === 0) t = performance.now();
  }
  t = performance.now();
  const perSec = n / ((t - t0) / 1000);
  console.log(`${name.padEnd(34)} ${perSec.toFixed(0).padStart(6)} /s  (${((t - t0) / n).toFixed(3)} ms each, n=${n})`);
  return perSec;
}

console.log(`backend: ${verifyBackendName()}, node ${process.version}, ${seconds}s per measurement`);
rate('verifySignature (ML-DSA-65)', () => verifySignature(payer.publicKey, msg, signed.signature));
rate('verifyTransaction (decode+checks)', () => verifyTransaction(signed, NETWORKS.live).ok);
