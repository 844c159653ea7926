/** Shared builders for devnet tests (not a test file itself): seeded wallets and signed transfers. */
import { NETWORKS, encodeSignedTx, signTx, type NetworkName, type TxOutput } from '../../../machines/chain/index.ts';
import { walletFromSeed, type Wallet } from '../codec/keys.ts';

export function seededWallet(n: number, network: NetworkName = 'test'): Wallet {
  return walletFromSeed(new Uint8Array(32).fill(n), network);
}

export interface TransferOpts {
  nonce: bigint;
  outputs: TxOutput[];
  fee?: bigint;
  reference?: string;
  chainId?: number;
}

/** Hex wire form of a transaction signed by `from` (deterministic signature: same inputs, same hash). */
export function signedTransfer(from: Wallet, o: TransferOpts): string {
  const tx = {
    chain_id: o.chainId ?? NETWORKS[from.network].chainId,
    from_public_key: from.publicKey,
    nonce: o.nonce,
    outputs: o.outputs,
    reference: o.reference ?? '',
    fee: o.fee ?? 0n,
  };
  return encodeSignedTx(signTx(tx, from.secretKey));
}

/** Flips one bit of a byte inside the signed bytes (hex), `offset` bytes from the start. */
export function flipByte(hex: string, offset: number): string {
  const i = offset * 2;
  const byte = parseInt(hex.slice(i, i + 2), 16) ^ 0x01;
  return hex.slice(0, i) + byte.toString(16).padStart(2, '0') + hex.slice(i + 2);
}
