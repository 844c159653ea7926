/**
 * Devnet block headers and their hash. The header is a fixed-width encoding (docs/devnet.md,
 * "Blocks") so the hash chain is as exact as the transaction encoding: the block hash is the
 * SHA-256 of the header, and the header carries the parent's hash.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { SignedTransaction } from '../../../machines/chain/index.ts';
import type { TxStatus } from '../rpc-types.ts';

export const BLOCK_MAGIC = 'ANM-BLOCK-v1';
export const ZERO_HASH = '0'.repeat(64);
const MAGIC_BYTES = new TextEncoder().encode(BLOCK_MAGIC);

/** A transaction accepted into the mempool (already verified). */
export interface PoolTx {
  hash: string;
  from: string;
  tx: SignedTransaction;
  /** Σ outputs + fee: what the sender must hold for the transaction to succeed. */
  total: bigint;
}

export interface BlockTx {
  pool: PoolTx;
  status: TxStatus;
  error: string | null;
}

export interface BlockHeader {
  chain_id: number;
  height: number;
  parent_hash: string;
  /** Unix milliseconds, never less than the parent's. */
  timestamp: number;
  /** Blocks this node had produced before this one: a block re-mined at the same height after dev_reorg never hashes like the one it replaces. */
  serial: number;
  tx_count: number;
  /** SHA-256 of the concatenated 32-byte transaction hashes, in block order. */
  tx_root: string;
}

export interface Block extends BlockHeader {
  hash: string;
  txs: BlockTx[];
}

export function txRoot(hashes: readonly string[]): string {
  const buf = new Uint8Array(32 * hashes.length);
  hashes.forEach((h, i) => buf.set(hexToBytes(h), 32 * i));
  return bytesToHex(sha256(buf));
}

/** magic ‖ u32 chain_id ‖ u64 height ‖ parent_hash ‖ u64 timestamp ‖ u64 serial ‖ u32 tx_count ‖ tx_root. */
export function headerBytes(h: BlockHeader): Uint8Array {
  const out = new Uint8Array(MAGIC_BYTES.length + 4 + 8 + 32 + 8 + 8 + 4 + 32);
  const view = new DataView(out.buffer);
  let off = 0;
  out.set(MAGIC_BYTES, off);
  off += MAGIC_BYTES.length;
  view.setUint32(off, h.chain_id);
  off += 4;
  view.setBigUint64(off, BigInt(h.height));
  off += 8;
  out.set(hexToBytes(h.parent_hash), off);
  off += 32;
  view.setBigUint64(off, BigInt(h.timestamp));
  off += 8;
  view.setBigUint64(off, BigInt(h.serial));
  off += 8;
  view.setUint32(off, h.tx_count);
  off += 4;
  out.set(hexToBytes(h.tx_root), off);
  return out;
}

export function blockHash(h: BlockHeader): string {
  return bytesToHex(sha256(headerBytes(h)));
}

export function makeBlock(header: Omit<BlockHeader, 'tx_count' | 'tx_root'>, txs: BlockTx[]): Block {
  const full: BlockHeader = { ...header, tx_count: txs.length, tx_root: txRoot(txs.map((t) => t.pool.hash)) };
  return { ...full, hash: blockHash(full), txs };
}
