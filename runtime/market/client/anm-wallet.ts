/**
 * What the ANM client schemes sign with: an ML-DSA-65 key pair and the next nonce of its
 * address (the node's `anm_getNonce … pending`). Each transfer pays its own chain fee.
 */
import { randomBytes } from 'node:crypto';
import { addressFromPublicKey, encodeSignedTx, signTx, txHash } from '../../../machines/chain/index.ts';
import { ANM_CHAIN } from '../lanes/anm-leg.ts';

export interface AnmWallet {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
  /** The nonce the wallet's next transaction must carry. */
  nextNonce(): Promise<bigint>;
  /** Chain fee per transfer, nANM (default 0: the devnet's minimum). */
  fee?: bigint;
}

/** A wallet over a node client: `anmWallet(keys, new AnmRpcClient(url))`. */
export function anmWallet(keys: { publicKey: Uint8Array; secretKey: Uint8Array }, node: { getNonce(address: string, tag?: 'pending' | 'latest'): Promise<bigint> }, fee?: bigint): AnmWallet {
  const address = addressFromPublicKey(keys.publicKey, ANM_CHAIN.hrp);
  return { ...keys, nextNonce: () => node.getNonce(address, 'pending'), ...(fee !== undefined && { fee }) };
}

/** A signed transfer of `amount` to `to` with `reference`: its hex wire form and hash. */
export function signTransfer(w: Pick<AnmWallet, 'publicKey' | 'secretKey' | 'fee'>, o: { to: string; amount: bigint; reference: string; nonce: bigint }): { hex: string; hash: string } {
  const tx = { chain_id: ANM_CHAIN.chainId, from_public_key: w.publicKey, nonce: o.nonce, outputs: [{ to: o.to, amount: o.amount }], reference: o.reference, fee: w.fee ?? 0n };
  const signed = signTx(tx, w.secretKey, randomBytes(32));
  return { hex: encodeSignedTx(signed), hash: txHash(signed) };
}

/** Native ANM on `native:1`, so the SDK's spend controls know the asset and its decimals. */
export const findAnmAsset = (asset: string, network: string): { asset: string; decimals: number; symbol: string } | undefined =>
  network === 'native:1' && asset === 'ANM' ? { asset: 'ANM', decimals: 9, symbol: 'ANM' } : undefined;
