/**
 * Typed JSON-RPC client of an ANM node (the devnet or any node speaking docs/devnet.md).
 * The indexer and the CLI reach the chain only through this. Every result is parsed with
 * the schemas of rpc-types.ts (decimal strings become bigint); node errors are thrown as
 * RpcError with the node's code and data.reason, transport failures as RpcTransportError.
 */
import { RuntimeError } from '../errors.ts';
import { z } from 'zod';
import { issuesMessage } from '../issues-message.ts';
import { RpcError } from './rpc-errors.ts';
import type { TurnBatcher } from '../engine/turn-batch.ts';
import { BATCHED_READS, repliesById, rpcReadBatcher, type RpcCall, type RpcReply } from './rpc-batch.ts';
import { fetchTransport, httpTransport, type RpcTransport } from './rpc-transport.ts';
import {
  automineResultWire,
  blockWire,
  chainTxWire,
  faucetResultWire,
  fullBlockWire,
  hash32,
  mineResultWire,
  receiptWire,
  reorgResultWire,
  statusWire,
  txLookupWire,
  u64,
  type ChainBlock,
  type ChainTx,
  type DevnetStatus,
  type FaucetResult,
  type FullChainBlock,
  type MineResult,
  type NonceTag,
  type Receipt,
  type ReorgResult,
  type TxLookup,
} from './rpc-types.ts';

/** The node could not be reached or answered garbage: worth a retry. */
export class RpcTransportError extends RuntimeError {
  constructor(
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('rpc_transport', message, options);
  }
}

export interface RpcClientOptions {
  /** Send requests through this fetch instead of node:http (tests, other runtimes). */
  fetch?: typeof fetch;
  /** Per-request timeout; 0 = none. */
  timeoutMs?: number;
  /**
   * Reads asked in the same event-loop turn go to the node as one JSON-RPC batch
   * (rpc-batch.ts). For a client many requests share, as the marketplace's leg checks.
   */
  batchReads?: boolean;
}

export type BlockTag = number | 'latest' | 'earliest';

// Built once: the indexer parses a block result with these on every block.
const fullBlockOrNull = fullBlockWire.nullable();
const blockOrNull = blockWire.nullable();

const responseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

export class AnmRpcClient {
  private nextId = 1;
  private readonly transport: RpcTransport;
  private readonly timeoutMs: number;
  private readonly reads: TurnBatcher<RpcCall, RpcReply> | undefined;

  /** `url` is the node's JSON-RPC endpoint, e.g. http://127.0.0.1:3002/test. */
  constructor(
    readonly url: string,
    opts: RpcClientOptions = {},
  ) {
    this.transport = opts.fetch ? fetchTransport(opts.fetch) : httpTransport;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.reads = opts.batchReads ? rpcReadBatcher({ alone: (c) => this.postAlone(c), batch: (calls) => this.postBatch(calls) }) : undefined;
  }

  /** One raw call; the result is parsed with `schema`. */
  async call<S extends z.ZodType>(method: string, params: unknown[], schema: S): Promise<z.output<S>> {
    if (this.reads && BATCHED_READS.has(method)) {
      const r = await this.reads.write({ method, params });
      if ('failed' in r) throw r.failed;
      return this.decodeBody(method, r.status, r.body, schema);
    }
    return this.decode(method, await this.post(method, params), schema);
  }

  private async post(method: string, params: unknown[]): Promise<{ status: number; text: string }> {
    const id = this.nextId++;
    try {
      return await this.transport.post(this.url, JSON.stringify({ jsonrpc: '2.0', id, method, params }), this.timeoutMs);
    } catch (e) {
      throw new RpcTransportError(this.url, `${method}: cannot reach the node at ${this.url}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }

  private async postAlone(c: RpcCall): Promise<RpcReply> {
    const res = await this.post(c.method, c.params);
    return { status: res.status, body: this.parse(c.method, res) };
  }

  /** Reads as one JSON-RPC batch (rpc-batch.ts): each call's reply, null when the node refuses batches. */
  private async postBatch(calls: RpcCall[]): Promise<RpcReply[] | null> {
    const ids = calls.map(() => this.nextId++);
    const of = (i: number) => `${calls[i]!.method} (one of ${calls.length} reads in a batch)`;
    let res: { status: number; text: string };
    try {
      res = await this.transport.post(this.url, JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: ids[i], method: c.method, params: c.params }))), this.timeoutMs);
    } catch (e) {
      return calls.map((_, i) => ({ failed: new RpcTransportError(this.url, `${of(i)}: cannot reach the node at ${this.url}: ${e instanceof Error ? e.message : String(e)}`, { cause: e }) }));
    }
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      body = undefined;
    }
    return repliesById(ids, res.status, body, (i, why) => new RpcTransportError(this.url, `${of(i)}: ${why} from ${this.url}`));
  }

  private parse(method: string, res: { status: number; text: string }): unknown {
    try {
      return JSON.parse(res.text);
    } catch {
      throw new RpcTransportError(this.url, `${method}: HTTP ${res.status} from ${this.url} is not JSON-RPC: ${res.text.slice(0, 200)}`);
    }
  }

  private decode<S extends z.ZodType>(method: string, res: { status: number; text: string }, schema: S): z.output<S> {
    return this.decodeBody(method, res.status, this.parse(method, res), schema);
  }

  private decodeBody<S extends z.ZodType>(method: string, status: number, body: unknown, schema: S): z.output<S> {
    const parsed = responseSchema.safeParse(body);
    if (!parsed.success) throw new RpcTransportError(this.url, `${method}: HTTP ${status} from ${this.url} is not a JSON-RPC 2.0 response`);
    const { error, result } = parsed.data;
    if (error) {
      const data = error.data as { reason?: unknown } | undefined;
      const withReason = data && typeof data === 'object' && typeof data.reason === 'string' ? (data as { reason: string }) : undefined;
      throw new RpcError(error.code, error.message, withReason);
    }
    const out = schema.safeParse(result);
    if (!out.success) {
      throw new RpcTransportError(this.url, `${method}: unexpected result shape: ${issuesMessage(out.error.issues, 'result')}`);
    }
    return out.data;
  }

  // ---- anm_* (any node) --------------------------------------------------------------

  chainId(): Promise<number> {
    return this.call('anm_chainId', [], z.number().int());
  }

  blockNumber(): Promise<number> {
    return this.call('anm_blockNumber', [], z.number().int().min(0));
  }

  getBlockByNumber(tag: BlockTag, full: true): Promise<FullChainBlock | null>;
  getBlockByNumber(tag: BlockTag, full?: false): Promise<ChainBlock | null>;
  getBlockByNumber(tag: BlockTag, full = false): Promise<ChainBlock | FullChainBlock | null> {
    return full ? this.prefetchFullBlock(tag).then((parse) => parse()) : this.call('anm_getBlockByNumber', [tag, false], blockOrNull);
  }

  /**
   * A full block fetched now and parsed (with the same checks as `getBlockByNumber`) when the
   * returned function is called. The indexer fetches blocks ahead of the one it scans: kept as
   * the response text until their turn, they are one string in V8's large-object space rather
   * than thousands of parsed objects that every young-generation collection would copy.
   */
  async prefetchFullBlock(tag: BlockTag): Promise<() => FullChainBlock | null> {
    const res = await this.post('anm_getBlockByNumber', [tag, true]);
    return () => this.decode('anm_getBlockByNumber', res, fullBlockOrNull);
  }

  getTransactionReceipt(hash: string): Promise<Receipt | null> {
    return this.call('anm_getTransactionReceipt', [hash], receiptWire.nullable());
  }

  getTransactionByHash(hash: string): Promise<TxLookup | null> {
    return this.call('anm_getTransactionByHash', [hash], txLookupWire.nullable());
  }

  /** Submits the hex wire form; returns the tx hash. */
  sendRawTransaction(hex: string): Promise<string> {
    return this.call('anm_sendRawTransaction', [hex], hash32);
  }

  getBalance(address: string): Promise<bigint> {
    return this.call('anm_getBalance', [address], u64);
  }

  /** `pending` (default): the nonce to sign the next transaction with; `latest`: count of included ones. */
  getNonce(address: string, tag: NonceTag = 'pending'): Promise<bigint> {
    return this.call('anm_getNonce', [address, tag], u64);
  }

  pendingTransactions(): Promise<ChainTx[]> {
    return this.call('anm_pendingTransactions', [], z.array(chainTxWire));
  }

  // ---- dev_* (devnet only) -----------------------------------------------------------

  mine(n = 1): Promise<MineResult> {
    return this.call('dev_mine', [n], mineResultWire);
  }

  reorg(depth: number, drop: string[] = []): Promise<ReorgResult> {
    return this.call('dev_reorg', [depth, { drop }], reorgResultWire);
  }

  faucet(address: string, amount: bigint): Promise<FaucetResult> {
    return this.call('dev_faucet', [address, amount.toString()], faucetResultWire);
  }

  setAutomine(ms: number): Promise<{ block_ms: number }> {
    return this.call('dev_setAutomine', [ms], automineResultWire);
  }

  status(): Promise<DevnetStatus> {
    return this.call('dev_status', [], statusWire);
  }
}
