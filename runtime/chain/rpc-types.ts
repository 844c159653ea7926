/**
 * Wire shapes of the ANM JSON-RPC (docs/devnet.md), shared by the devnet server and the
 * client. Amounts and nonces are bigint in code and decimal strings on the wire; heights,
 * indexes and timestamps are JSON numbers. The client parses every result through these
 * schemas, so a node that answers something else fails loudly instead of half-working.
 */
import { z } from 'zod';

export const U64_MAX = 0xffff_ffff_ffff_ffffn;

/** Decimal string of 0..2^64-1 without sign, leading zeros or exponent. */
const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
export const decimalString = z
  .string()
  .regex(DECIMAL, 'a decimal string of an unsigned integer')
  // zod runs the refinement after a failed regex too: BigInt('1e3') would throw out of safeParse.
  .refine((s) => !DECIMAL.test(s) || BigInt(s) <= U64_MAX, 'at most 2^64-1');
export const u64 = decimalString.transform((s) => BigInt(s));
export const hash32 = z.string().regex(/^[0-9a-f]{64}$/, 'lowercase hex of 32 bytes');
const height = z.number().int().min(0);

export const txStatus = z.enum(['success', 'failed']);
export type TxStatus = z.infer<typeof txStatus>;

export const txOutputWire = z.object({ to: z.string(), amount: u64 });
export const chainTxWire = z.object({
  hash: hash32,
  chain_id: z.number().int(),
  from: z.string(),
  nonce: u64,
  outputs: z.array(txOutputWire),
  reference: z.string(),
  fee: u64,
});
export type ChainTx = z.infer<typeof chainTxWire>;

/** A transaction inside a full block: where it sits and how it went. */
export const includedTxWire = chainTxWire.extend({ tx_index: z.number().int().min(0), status: txStatus });
export type IncludedTx = z.infer<typeof includedTxWire>;

/** anm_getTransactionByHash: a transaction either pending or in the canonical chain. */
export const txLookupWire = chainTxWire.extend({
  block_height: height.nullable(),
  block_hash: hash32.nullable(),
  tx_index: z.number().int().min(0).nullable(),
});
export type TxLookup = z.infer<typeof txLookupWire>;

const blockHeader = {
  height,
  hash: hash32,
  parent_hash: hash32,
  timestamp: z.number().int().min(0),
  serial: z.number().int().min(0),
  tx_root: hash32,
};
export const blockWire = z.object({ ...blockHeader, transactions: z.array(hash32) });
export const fullBlockWire = z.object({ ...blockHeader, transactions: z.array(includedTxWire) });
export type ChainBlock = z.infer<typeof blockWire>;
export type FullChainBlock = z.infer<typeof fullBlockWire>;

export const receiptWire = z.object({
  tx_hash: hash32,
  status: txStatus,
  block_height: height,
  block_hash: hash32,
  tx_index: z.number().int().min(0),
  from: z.string(),
  /** Why a failed receipt failed (`insufficient_balance`); null on success. */
  error: z.string().nullable(),
});
export type Receipt = z.infer<typeof receiptWire>;

const headRef = z.object({ height, hash: hash32 });
export type HeadRef = z.infer<typeof headRef>;

export const mineResultWire = z.object({ blocks: z.array(headRef), head: headRef });
export type MineResult = z.infer<typeof mineResultWire>;

export const reorgResultWire = z.object({
  /** Height of the last block both chains share. */
  fork_height: height,
  old_head: headRef,
  removed: z.array(headRef),
  /** Transactions of the removed blocks discarded for good (the `drop` list). */
  dropped: z.array(hash32),
  /** Transactions of the removed blocks put back in the mempool before re-mining. */
  returned: z.array(hash32),
  added: z.array(headRef),
  head: headRef,
});
export type ReorgResult = z.infer<typeof reorgResultWire>;

export const faucetResultWire = z.object({ address: z.string(), amount: u64, balance: u64 });
export type FaucetResult = z.infer<typeof faucetResultWire>;

export const automineResultWire = z.object({ block_ms: z.number().int().min(0) });

export const statusWire = z.object({
  network: z.enum(['test', 'live']),
  chain_id: z.number().int(),
  hrp: z.string(),
  head: headRef,
  pending: z.number().int().min(0),
  block_ms: z.number().int().min(0),
  max_block_txs: z.number().int().min(1),
  fee_policy: z.literal('burn'),
});
export type DevnetStatus = z.infer<typeof statusWire>;

export type NonceTag = 'pending' | 'latest';
