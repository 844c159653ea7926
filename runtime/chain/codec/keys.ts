/**
 * Key generation, hedged signing and wallet files. The randomness lives here, not in
 * machines/: key seeds and signing entropy come from crypto.getRandomValues.
 */
import { TerminalError } from '../../errors.ts';
import { readFile, writeFile } from 'node:fs/promises';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { z } from 'zod';
import { issuesMessage } from '../../issues-message.ts';
import {
  ML_DSA65_PUBLIC_KEY_LENGTH,
  ML_DSA65_SECRET_KEY_LENGTH,
  NETWORKS,
  addressFromPublicKey,
  keypairFromSeed,
  publicKeyFromSecretKey,
  signTx,
  type NetworkName,
  type SignedTransaction,
  type Transaction,
} from '../../../machines/chain/index.ts';

export interface Wallet {
  network: NetworkName;
  address: string;
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

function randomBytes(n: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

/** Deterministic wallet from a 32-byte ML-DSA-65 seed (tests, vectors, devnet genesis). */
export function walletFromSeed(seed: Uint8Array, network: NetworkName): Wallet {
  const { publicKey, secretKey } = keypairFromSeed(seed);
  return { network, address: addressFromPublicKey(publicKey, NETWORKS[network].hrp), publicKey, secretKey };
}

export function generateWallet(network: NetworkName): Wallet {
  const seed = randomBytes(32);
  try {
    return walletFromSeed(seed, network);
  } finally {
    seed.fill(0);
  }
}

/** Hedged ML-DSA-65 signature (fresh 32-byte rnd per signature, FIPS 204 default). */
export function sign(tx: Transaction, secretKey: Uint8Array): SignedTransaction {
  return signTx(tx, secretKey, randomBytes(32));
}

const hexOf = (bytes: number) =>
  z.string().regex(new RegExp(`^[0-9a-f]{${bytes * 2}}$`), `lowercase hex of ${bytes} bytes`);

export const walletFileSchema = z.object({
  address: z.string(),
  network: z.enum(['live', 'test']),
  public_key: hexOf(ML_DSA65_PUBLIC_KEY_LENGTH),
  secret_key: hexOf(ML_DSA65_SECRET_KEY_LENGTH),
});
export type WalletFile = z.infer<typeof walletFileSchema>;

export function walletToFile(w: Wallet): WalletFile {
  return { address: w.address, network: w.network, public_key: bytesToHex(w.publicKey), secret_key: bytesToHex(w.secretKey) };
}

export class WalletFileError extends TerminalError {
  constructor(message: string) {
    super('wallet_file', message);
  }
}

/** Parses and cross-checks a wallet file: secret key → public key → address for the network. */
export function walletFromFile(json: unknown): Wallet {
  const parsed = walletFileSchema.safeParse(json);
  if (!parsed.success) throw new WalletFileError(`invalid wallet file: ${issuesMessage(parsed.error.issues, 'file')}`);
  const f = parsed.data;
  const publicKey = hexToBytes(f.public_key);
  const secretKey = hexToBytes(f.secret_key);
  const derived = publicKeyFromSecretKey(secretKey);
  if (bytesToHex(derived) !== f.public_key) throw new WalletFileError('wallet file: public_key does not belong to secret_key');
  const address = addressFromPublicKey(publicKey, NETWORKS[f.network].hrp);
  if (address !== f.address) throw new WalletFileError(`wallet file: address does not match public_key on network ${f.network}`);
  return { network: f.network, address, publicKey, secretKey };
}

/** Writes owner-only (0600); refuses to overwrite unless `overwrite` is set. */
export async function writeWalletFile(path: string, w: Wallet, opts: { overwrite?: boolean } = {}): Promise<void> {
  const body = JSON.stringify(walletToFile(w), null, 2) + '\n';
  await writeFile(path, body, { mode: 0o600, flag: opts.overwrite ? 'w' : 'wx' });
}

export async function readWalletFile(path: string): Promise<Wallet> {
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WalletFileError(`wallet file ${path} is not JSON`);
  }
  return walletFromFile(json);
}
