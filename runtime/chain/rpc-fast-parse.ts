/**
 * Hand-written checks of the full-block result (rpc-types.ts `fullBlockWire`), the one result
 * the indexer reads for every block: zod takes ~10-40 ms on a 1,000-transaction block until
 * V8 has optimised it, these take well under 1 ms. They accept a subset of what the schema
 * accepts and build the same output; anything else returns undefined and the client falls
 * back to the schema, which then accepts it or words the error.
 */
import { U64_MAX, type FullChainBlock, type IncludedTx } from './rpc-types.ts';

type Obj = Record<string, unknown>;

const HASH32 = /^[0-9a-f]{64}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isHash = (v: unknown): v is string => typeof v === 'string' && HASH32.test(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function u64(v: unknown): bigint | undefined {
  if (typeof v !== 'string' || !DECIMAL.test(v)) return undefined;
  const n = BigInt(v);
  return n <= U64_MAX ? n : undefined;
}

function includedTx(v: unknown): IncludedTx | undefined {
  if (!isObj(v) || !isHash(v.hash) || typeof v.chain_id !== 'number' || !Number.isSafeInteger(v.chain_id)) return undefined;
  if (typeof v.from !== 'string' || typeof v.reference !== 'string' || !Array.isArray(v.outputs)) return undefined;
  if (!isCount(v.tx_index) || (v.status !== 'success' && v.status !== 'failed')) return undefined;
  const nonce = u64(v.nonce);
  const fee = u64(v.fee);
  if (nonce === undefined || fee === undefined) return undefined;
  const outputs: IncludedTx['outputs'] = [];
  for (const o of v.outputs as unknown[]) {
    const amount = isObj(o) && typeof o.to === 'string' ? u64(o.amount) : undefined;
    if (amount === undefined) return undefined;
    outputs.push({ to: (o as { to: string }).to, amount });
  }
  return { hash: v.hash, chain_id: v.chain_id, from: v.from, nonce, outputs, reference: v.reference, fee, tx_index: v.tx_index, status: v.status };
}

/** `anm_getBlockByNumber(h, true)`: the block, null for none, undefined = let the schema decide. */
export function parseFullBlock(v: unknown): FullChainBlock | null | undefined {
  if (v === null) return null;
  if (!isObj(v) || !isCount(v.height) || !isHash(v.hash) || !isHash(v.parent_hash) || !isCount(v.timestamp)) return undefined;
  if (!isCount(v.serial) || !isHash(v.tx_root) || !Array.isArray(v.transactions)) return undefined;
  const transactions: IncludedTx[] = [];
  for (const t of v.transactions as unknown[]) {
    const tx = includedTx(t);
    if (!tx) return undefined;
    transactions.push(tx);
  }
  return { height: v.height, hash: v.hash, parent_hash: v.parent_hash, timestamp: v.timestamp, serial: v.serial, tx_root: v.tx_root, transactions };
}
