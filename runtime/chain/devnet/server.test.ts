/**
 * The devnet JSON-RPC over real HTTP (DESIGN §3 "Devnet JSON-RPC"; docs/devnet.md): every
 * method through AnmRpcClient, JSON-RPC 2.0 envelope errors with raw fetch, both networks
 * on one server under /test and /live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { paymentReference } from '../../../machines/chain/index.ts';
import { AnmRpcClient, RpcTransportError } from '../rpc-client.ts';
import { RpcError } from '../rpc-errors.ts';
import { seededWallet, signedTransfer } from './fixtures.test-util.ts';
import { startDevnetServer, type DevnetServer } from './server.ts';

let server: DevnetServer;
let test: AnmRpcClient;
let live: AnmRpcClient;
const alice = seededWallet(21);
const bob = seededWallet(22);
const aliceLive = seededWallet(21, 'live');

beforeAll(async () => {
  server = await startDevnetServer({ port: 0, blockMs: 0 });
  test = new AnmRpcClient(`${server.url}/test`);
  live = new AnmRpcClient(`${server.url}/live`);
});
afterAll(() => server.close());

async function post(path: string, body: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RpcError);
  return e as RpcError;
}

describe('devnet JSON-RPC over HTTP', () => {
  it('serves two chains: /test is chain 1001, /live is chain 1, with separate state', async () => {
    expect(await test.chainId()).toBe(1001);
    expect(await live.chainId()).toBe(1);
    await test.mine(2);
    expect(await test.blockNumber()).toBeGreaterThanOrEqual(2);
    expect(await live.blockNumber()).toBe(0);
    const status = (await (await fetch(`${server.url}/live`)).json()) as unknown;
    expect(status).toMatchObject({ network: 'live', chain_id: 1, hrp: 'anm', fee_policy: 'burn' });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/nope`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('runs a payment through send, pending, mine, receipt, block and balances', async () => {
    await test.faucet(alice.address, 1_000_000n);
    expect(await test.getBalance(alice.address)).toBe(1_000_000n);
    const reference = paymentReference(new Uint8Array(20).fill(7));
    const nonce = await test.getNonce(alice.address);
    const hex = signedTransfer(alice, { nonce, outputs: [{ to: bob.address, amount: 980n }, { to: alice.address, amount: 20n }], reference, fee: 3n });
    const hash = await test.sendRawTransaction(hex);
    expect(await test.getTransactionReceipt(hash)).toBeNull();
    const pending = await test.pendingTransactions();
    expect(pending).toEqual([{ hash, chain_id: 1001, from: alice.address, nonce, outputs: [{ to: bob.address, amount: 980n }, { to: alice.address, amount: 20n }], reference, fee: 3n }]);
    expect(await test.getTransactionByHash(hash)).toMatchObject({ hash, block_height: null, block_hash: null, tx_index: null });
    expect(await test.getNonce(alice.address, 'pending')).toBe(nonce + 1n);
    expect(await test.getNonce(alice.address, 'latest')).toBe(nonce);
    const { head } = await test.mine(1);
    const receipt = await test.getTransactionReceipt(hash);
    expect(receipt).toEqual({ tx_hash: hash, status: 'success', block_height: head.height, block_hash: head.hash, tx_index: 0, from: alice.address, error: null });
    const block = await test.getBlockByNumber(head.height, true);
    expect(block?.transactions).toEqual([{ ...pending[0], tx_index: 0, status: 'success' }]);
    const short = await test.getBlockByNumber('latest');
    expect(short).toMatchObject({ height: head.height, hash: head.hash, transactions: [hash] });
    expect((await test.getBlockByNumber(head.height - 1))?.hash).toBe(short?.parent_hash);
    expect(await test.getBlockByNumber(head.height + 100)).toBeNull();
    expect((await test.getBlockByNumber('earliest'))?.height).toBe(0);
    expect(await test.getBalance(alice.address)).toBe(1_000_000n - 980n - 3n);
    expect(await test.getBalance(bob.address)).toBe(980n);
  });

  it('answers refusals with JSON-RPC errors carrying a reason', async () => {
    const nonce = await test.getNonce(alice.address, 'latest');
    const stale = signedTransfer(alice, { nonce: nonce - 1n, outputs: [{ to: bob.address, amount: 1n }] });
    const replay = await rpcError(test.sendRawTransaction(stale));
    expect([replay.code, replay.reason]).toEqual([-32002, 'nonce_too_low']);
    const wrongChain = await rpcError(live.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 1n }] })));
    expect([wrongChain.code, wrongChain.reason]).toEqual([-32001, 'wrong_chain_id']);
    const wrongHrp = await rpcError(live.sendRawTransaction(signedTransfer(aliceLive, { nonce: 0n, outputs: [{ to: bob.address, amount: 1n }] })));
    expect(wrongHrp.reason).toBe('wrong_hrp');
    expect((await rpcError(test.getBalance(aliceLive.address))).reason).toBe('wrong_hrp');
    expect((await rpcError(test.reorg(10_000))).reason).toBe('reorg_too_deep');
    expect((await rpcError(test.call('anm_nope', [], z.unknown()))).code).toBe(-32601);
  });

  it('reorgs with a drop over RPC and re-includes the rest', async () => {
    await test.faucet(bob.address, 50n);
    const n = await test.getNonce(bob.address);
    const a = await test.sendRawTransaction(signedTransfer(bob, { nonce: n, outputs: [{ to: alice.address, amount: 1n }] }));
    const b = await test.sendRawTransaction(signedTransfer(bob, { nonce: n + 1n, outputs: [{ to: alice.address, amount: 2n }] }));
    await test.mine(1);
    const before = await test.getTransactionReceipt(b);
    // Read (and so encoded once) before the reorg: the new block at that height must not be served from it.
    const oldBlock = await test.getBlockByNumber(before!.block_height, true);
    expect(oldBlock?.transactions.map((t) => t.hash)).toEqual([a, b]);
    const r = await test.reorg(1, [b]);
    expect(r.dropped).toEqual([b]);
    expect(r.returned).toEqual([a]);
    expect(r.head.height).toBe(r.old_head.height + 1);
    const after = await test.getTransactionReceipt(a);
    expect(after?.block_height).toBe(before?.block_height);
    expect(after?.block_hash).not.toBe(before?.block_hash);
    expect(await test.getTransactionReceipt(b)).toBeNull();
    expect(await test.getTransactionByHash(b)).toBeNull();
    const newBlock = await test.getBlockByNumber(before!.block_height, true);
    expect(newBlock?.hash).toBe(after?.block_hash);
    expect(newBlock?.transactions.map((t) => t.hash)).toEqual([a]);
    expect((await test.getBlockByNumber(before!.block_height))?.transactions).toEqual([a]);
  });

  it('speaks the JSON-RPC 2.0 envelope: parse error, invalid request, params, batches, notifications', async () => {
    expect((await post('/test', '{not json')).json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect((await post('/test', JSON.stringify({ id: 1, method: 'anm_chainId' }))).json).toMatchObject({ id: 1, error: { code: -32600 } });
    expect((await post('/test', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'anm_getBalance', params: [] }))).json).toMatchObject({
      id: 2,
      error: { code: -32602, data: { reason: 'invalid_params' } },
    });
    expect((await post('/test', JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'dev_faucet', params: [alice.address, '-5'] }))).json).toMatchObject({ error: { code: -32602 } });
    expect((await post('/test', JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'anm_chainId', params: {} }))).json).toMatchObject({ id: 'x', error: { code: -32602 } });
    const batch = await post('/test', JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'anm_chainId' },
      { jsonrpc: '2.0', method: 'dev_mine', params: [1] },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
    ]));
    expect(batch.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: 1001 },
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'method nope does not exist', data: { reason: 'method_not_found' } } },
    ]);
    // Block results are spliced in pre-encoded: still one well-formed batch, ids echoed as sent.
    const blocks = await post('/test', JSON.stringify([
      { jsonrpc: '2.0', id: 'a"b', method: 'anm_getBlockByNumber', params: [0, false] },
      { jsonrpc: '2.0', id: 7, method: 'anm_getBlockByNumber', params: [0, true] },
      { jsonrpc: '2.0', id: 8, method: 'anm_chainId' },
    ]));
    expect(blocks.json).toMatchObject([
      { jsonrpc: '2.0', id: 'a"b', result: { height: 0, transactions: [] } },
      { jsonrpc: '2.0', id: 7, result: { height: 0, transactions: [] } },
      { jsonrpc: '2.0', id: 8, result: 1001 },
    ]);
    const notification = await post('/test', JSON.stringify({ jsonrpc: '2.0', method: 'anm_chainId' }));
    expect(notification.status).toBe(204);
  });

  it('switches automine on and off over RPC', async () => {
    expect(await live.setAutomine(15)).toEqual({ block_ms: 15 });
    await new Promise((r) => setTimeout(r, 120));
    expect(await live.setAutomine(0)).toEqual({ block_ms: 0 });
    const h = await live.blockNumber();
    expect(h).toBeGreaterThanOrEqual(2);
    expect((await live.status()).block_ms).toBe(0);
  });

  it('reports an unreachable node as a transport error', async () => {
    const dead = new AnmRpcClient('http://127.0.0.1:9/test', { timeoutMs: 2_000 });
    await expect(dead.chainId()).rejects.toBeInstanceOf(RpcTransportError);
  });
});
