/**
 * JSON-RPC 2.0 dispatch for one DevnetNode: positional params checked with zod, results in
 * the wire shapes of rpc-types.ts (amounts and nonces as decimal strings). Transport-free:
 * server.ts feeds it parsed bodies, tests may call handleRpc directly.
 */
import { z } from 'zod';
import { RpcError } from '../rpc-errors.ts';
import { decimalString, hash32, type DevnetStatus } from '../rpc-types.ts';
import type { Block, BlockTx, PoolTx } from './block.ts';
import type { DevnetNode } from './node.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const MAX_MINE = 10_000;

function txWire(p: PoolTx): Record<string, Json> {
  return {
    hash: p.hash,
    chain_id: p.tx.chain_id,
    from: p.from,
    nonce: p.tx.nonce.toString(),
    outputs: p.tx.outputs.map((o) => ({ to: o.to, amount: o.amount.toString() })),
    reference: p.tx.reference,
    fee: p.tx.fee.toString(),
  };
}

function includedWire(t: BlockTx, index: number): Record<string, Json> {
  return { ...txWire(t.pool), tx_index: index, status: t.status };
}

export function blockWire(b: Block, full: boolean): Record<string, Json> {
  return {
    height: b.height,
    hash: b.hash,
    parent_hash: b.parent_hash,
    timestamp: b.timestamp,
    serial: b.serial,
    tx_root: b.tx_root,
    transactions: full ? b.txs.map(includedWire) : b.txs.map((t) => t.pool.hash),
  };
}

/**
 * A result already serialized to JSON. Blocks are immutable once mined, and a 1,000-transaction
 * block costs milliseconds to turn into wire objects and JSON again on every read, so each
 * block's encoding is made once. `toJSON` keeps it usable by a plain JSON.stringify.
 */
export class EncodedJson {
  constructor(readonly bytes: Buffer) {}
  toJSON(): unknown {
    return JSON.parse(this.bytes.toString('utf8'));
  }
}

/**
 * Keyed by the Block object: a reorg replaces the Block objects above the fork (new hashes),
 * so a block that left the chain can never be served from here, and its entry goes with it.
 */
const encodedBlocks = new WeakMap<Block, { full?: EncodedJson; short?: EncodedJson }>();

function encodedBlock(b: Block, full: boolean): EncodedJson {
  let entry = encodedBlocks.get(b);
  if (!entry) encodedBlocks.set(b, (entry = {}));
  const key = full ? 'full' : 'short';
  return (entry[key] ??= new EncodedJson(Buffer.from(JSON.stringify(blockWire(b, full)), 'utf8')));
}

/** One response (or batch) as the bytes of its JSON, splicing in pre-encoded results. */
export function encodeRpcResponse(out: RpcResponse | RpcResponse[]): Buffer {
  const one = (r: RpcResponse): Buffer =>
    r.result instanceof EncodedJson
      ? Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(r.id)},"result":`), r.result.bytes, Buffer.from('}')])
      : Buffer.from(JSON.stringify(r), 'utf8');
  if (!Array.isArray(out)) return one(out);
  const parts: Buffer[] = [Buffer.from('[')];
  out.forEach((r, i) => parts.push(...(i > 0 ? [Buffer.from(','), one(r)] : [one(r)])));
  parts.push(Buffer.from(']'));
  return Buffer.concat(parts);
}

export function devnetStatus(node: DevnetNode): DevnetStatus {
  return {
    network: node.network,
    chain_id: node.chainId,
    hrp: node.hrp,
    head: { height: node.height, hash: node.head.hash },
    pending: node.pending().length,
    block_ms: node.automineMs,
    max_block_txs: node.maxBlockTxs,
    fee_policy: 'burn',
  };
}

const blockTag = z.union([z.number().int().min(0), z.enum(['latest', 'earliest']), z.string().regex(/^(0|[1-9][0-9]*)$/)]);

/** Positional params schema and handler per method. Optional trailing params may be omitted. */
function methods(node: DevnetNode) {
  const head = () => ({ height: node.height, hash: node.head.hash });
  return {
    anm_chainId: { params: z.tuple([]), run: () => node.chainId },
    anm_blockNumber: { params: z.tuple([]), run: () => node.height },
    anm_getBlockByNumber: {
      params: z.tuple([blockTag, z.boolean().optional()]),
      run: ([tag, full]: [z.infer<typeof blockTag>, boolean | undefined]) => {
        const height = tag === 'latest' ? node.height : tag === 'earliest' ? 0 : Number(tag);
        const b = node.blockAt(height);
        return b ? encodedBlock(b, full ?? false) : null;
      },
    },
    anm_getTransactionReceipt: {
      params: z.tuple([hash32]),
      run: ([hash]: [string]) => {
        const found = node.findIncluded(hash);
        if (!found) return null;
        return {
          tx_hash: hash,
          status: found.tx.status,
          block_height: found.block.height,
          block_hash: found.block.hash,
          tx_index: found.index,
          from: found.tx.pool.from,
          error: found.tx.error,
        };
      },
    },
    anm_getTransactionByHash: {
      params: z.tuple([hash32]),
      run: ([hash]: [string]) => {
        const found = node.findIncluded(hash);
        if (found) return { ...txWire(found.tx.pool), block_height: found.block.height, block_hash: found.block.hash, tx_index: found.index };
        const p = node.findPending(hash);
        return p ? { ...txWire(p), block_height: null, block_hash: null, tx_index: null } : null;
      },
    },
    anm_sendRawTransaction: { params: z.tuple([z.string()]), run: ([hex]: [string]) => node.sendRawTransaction(hex) },
    anm_getBalance: { params: z.tuple([z.string()]), run: ([a]: [string]) => node.balanceOf(a).toString() },
    anm_getNonce: {
      params: z.tuple([z.string(), z.enum(['pending', 'latest']).optional()]),
      run: ([a, tag]: [string, 'pending' | 'latest' | undefined]) => node.nonceOf(a, tag ?? 'pending').toString(),
    },
    anm_pendingTransactions: { params: z.tuple([]), run: () => node.pending().map(txWire) },
    dev_mine: {
      params: z.tuple([z.number().int().min(0).max(MAX_MINE).optional()]),
      run: ([n]: [number | undefined]) => ({ blocks: node.mine(n ?? 1).map((b) => ({ height: b.height, hash: b.hash })), head: head() }),
    },
    dev_reorg: {
      params: z.tuple([z.number().int().min(1), z.object({ drop: z.array(hash32).optional() }).strict().optional()]),
      run: ([depth, opts]: [number, { drop?: string[] } | undefined]) => node.reorg(depth, opts?.drop ?? []),
    },
    dev_faucet: {
      params: z.tuple([z.string(), decimalString]),
      run: ([address, amount]: [string, string]) => {
        const balance = node.faucet(address, BigInt(amount));
        return { address, amount, balance: balance.toString() };
      },
    },
    dev_setAutomine: {
      params: z.tuple([z.number().int().min(0)]),
      run: ([ms]: [number]) => {
        node.setAutomine(ms);
        return { block_ms: node.automineMs };
      },
    },
    dev_status: { params: z.tuple([]), run: () => devnetStatus(node) },
  } as const;
}

type MethodTable = Record<string, { params: z.ZodType; run: (p: never) => unknown }>;

export interface RpcResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export function makeRpcHandler(node: DevnetNode): (body: unknown) => RpcResponse | RpcResponse[] | undefined {
  const table = methods(node) as unknown as MethodTable;

  const one = (req: unknown): RpcResponse | undefined => {
    const idOk = (v: unknown): v is string | number | null => v === null || typeof v === 'string' || typeof v === 'number';
    const r = req as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown } | null;
    const id = r && typeof r === 'object' && idOk(r.id) ? r.id : null;
    const isNotification = r !== null && typeof r === 'object' && !('id' in r);
    try {
      if (!r || typeof r !== 'object' || Array.isArray(r) || r.jsonrpc !== '2.0' || typeof r.method !== 'string' || ('id' in r && !idOk(r.id))) {
        throw RpcError.of('invalid_request', 'invalid_request', 'not a JSON-RPC 2.0 request object');
      }
      const m = Object.hasOwn(table, r.method) ? table[r.method] : undefined;
      if (!m) throw RpcError.of('method_not_found', 'method_not_found', `method ${r.method} does not exist`);
      const raw = r.params === undefined ? [] : r.params;
      if (!Array.isArray(raw)) throw RpcError.of('invalid_params', 'invalid_params', `${r.method} takes positional params (an array)`);
      const parsed = m.params.safeParse(raw);
      if (!parsed.success) {
        const detail = parsed.error.issues.map((i) => `${i.path.length ? `params[${i.path.join('.')}]` : 'params'}: ${i.message}`).join('; ');
        throw RpcError.of('invalid_params', 'invalid_params', `${r.method}: ${detail}`);
      }
      const result = m.run(parsed.data as never);
      return isNotification ? undefined : { jsonrpc: '2.0', id, result };
    } catch (e) {
      if (isNotification) return undefined;
      const err = e instanceof RpcError ? e : RpcError.of('internal_error', 'internal_error', e instanceof Error ? e.message : String(e));
      return { jsonrpc: '2.0', id, error: err.toJSON() };
    }
  };

  return (body) => {
    if (Array.isArray(body)) {
      if (body.length === 0) return { jsonrpc: '2.0', id: null, error: RpcError.of('invalid_request', 'invalid_request', 'empty batch').toJSON() };
      const out = body.map(one).filter((x): x is RpcResponse => x !== undefined);
      return out.length ? out : undefined;
    }
    return one(body);
  };
}
