/**
 * A batching node client (rpc-batch.ts) against the real devnet over HTTP: reads asked in one
 * turn go as one JSON-RPC batch and each caller gets what the plain client gets, a node error
 * fails only its own call, writes are never batched, a node that does not answer batches is
 * asked call by call, and an unreachable node fails each call once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnmRpcClient, RpcTransportError } from './rpc-client.ts';
import { RpcError } from './rpc-errors.ts';
import { seededWallet, signedTransfer } from './devnet/fixtures.test-util.ts';
import { startDevnetServer, type DevnetServer } from './devnet/server.ts';

let server: DevnetServer;
let plain: AnmRpcClient;
const alice = seededWallet(31);
const bob = seededWallet(32);

/** A fetch that records each POST's body before passing it on (`answer` may replace the node). */
function recording(answer?: (body: unknown) => Response | undefined): { fetch: typeof fetch; bodies: unknown[] } {
  const bodies: unknown[] = [];
  return {
    bodies,
    fetch: async (url, init) => {
      const body: unknown = JSON.parse(init?.body as string);
      bodies.push(body);
      return answer?.(body) ?? fetch(url, init);
    },
  };
}

beforeAll(async () => {
  server = await startDevnetServer({ port: 0, blockMs: 0 });
  plain = new AnmRpcClient(`${server.url}/test`);
  await plain.faucet(alice.address, 1_000_000n);
  await plain.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 5n }], fee: 1n }));
  await plain.mine(1);
});
afterAll(() => server.close());

describe('a batching node client', () => {
  it('sends the reads of one turn as one batch, and each caller gets what the plain client answers', async () => {
    const rec = recording();
    const client = new AnmRpcClient(`${server.url}/test`, { fetch: rec.fetch, batchReads: true });
    const ask = (c: AnmRpcClient) => Promise.all([c.getBalance(alice.address), c.getNonce(alice.address, 'pending'), c.getBalance(bob.address), c.blockNumber(), c.getTransactionByHash('00'.repeat(32))]);
    const batched = await ask(client);
    expect(batched).toEqual(await ask(plain));
    expect(batched.slice(0, 4)).toEqual([1_000_000n - 6n, 1n, 5n, 1]);
    expect(rec.bodies).toHaveLength(1);
    expect((rec.bodies[0] as Array<{ method: string }>).map((b) => b.method)).toEqual(['anm_getBalance', 'anm_getNonce', 'anm_getBalance', 'anm_blockNumber', 'anm_getTransactionByHash']);
  });

  it('sends a read alone as a plain request, and reads of later turns in batches of their own', async () => {
    const rec = recording();
    const client = new AnmRpcClient(`${server.url}/test`, { fetch: rec.fetch, batchReads: true });
    expect(await client.getNonce(bob.address)).toBe(0n);
    await Promise.all([client.blockNumber(), client.blockNumber()]);
    expect(rec.bodies).toHaveLength(2);
    expect(Array.isArray(rec.bodies[0])).toBe(false);
    expect(rec.bodies[1]).toHaveLength(2);
  });

  it("fails only the call the node refused, with the node's error", async () => {
    const rec = recording();
    const client = new AnmRpcClient(`${server.url}/test`, { fetch: rec.fetch, batchReads: true });
    const [bad, good] = await Promise.allSettled([client.getBalance('not-an-address'), client.getBalance(bob.address)]);
    expect(rec.bodies).toHaveLength(1);
    expect(rec.bodies[0]).toHaveLength(2);
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(RpcError);
    expect((bad as PromiseRejectedResult).reason).toMatchObject({ code: -32602 });
    expect(good).toEqual({ status: 'fulfilled', value: await plain.getBalance(bob.address) });
  });

  it('never batches a write', async () => {
    const rec = recording();
    const client = new AnmRpcClient(`${server.url}/test`, { fetch: rec.fetch, batchReads: true });
    const hex = signedTransfer(alice, { nonce: 1n, outputs: [{ to: bob.address, amount: 7n }], fee: 1n });
    const [hash, nonce] = await Promise.all([client.sendRawTransaction(hex), client.getNonce(alice.address, 'latest')]);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(nonce).toBe(1n);
    expect(rec.bodies.map((b) => (Array.isArray(b) ? 'batch' : (b as { method: string }).method))).toEqual(['anm_sendRawTransaction', 'anm_getNonce']);
  });

  it('asks call by call when the node does not answer the batch as a batch', async () => {
    // A node without batches: an array is refused with one error object.
    const rec = recording((body) => (Array.isArray(body) ? Response.json({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batches are not supported' } }) : undefined));
    const client = new AnmRpcClient(`${server.url}/test`, { fetch: rec.fetch, batchReads: true });
    expect(await Promise.all([client.getBalance(bob.address), client.getNonce(bob.address)])).toEqual(await Promise.all([plain.getBalance(bob.address), plain.getNonce(bob.address)]));
    expect(rec.bodies.map((b) => Array.isArray(b))).toEqual([true, false, false]);
  });

  it('matches answers to calls by id, whatever their order', async () => {
    const rec = recording();
    const reversing: typeof fetch = async (url, init) => {
      const res = await rec.fetch(url, init);
      const body: unknown = await res.json();
      return Response.json(Array.isArray(body) ? body.reverse() : body);
    };
    const client = new AnmRpcClient(`${server.url}/test`, { fetch: reversing, batchReads: true });
    const ask = (c: AnmRpcClient) => Promise.all([c.getBalance(alice.address), c.getNonce(alice.address, 'latest'), c.blockNumber()]);
    expect(await ask(client)).toEqual(await ask(plain));
    expect(rec.bodies).toHaveLength(1);
  });

  it('fails each call, as a transport error and without asking again, when the answer is not a batch answer', async () => {
    const broken = [
      // A proxy's error page.
      () => new Response('<html>503 Service Unavailable</html>', { status: 503 }),
      // An array that lacks the first call's response.
      (body: unknown) => Response.json((body as Array<{ id: number }>).slice(1).map((c) => ({ jsonrpc: '2.0', id: c.id, result: 1 }))),
    ];
    for (const answer of broken) {
      const rec = recording((body) => (Array.isArray(body) ? answer(body) : undefined));
      const client = new AnmRpcClient(`${server.url}/test`, { fetch: rec.fetch, batchReads: true });
      const [first, second] = await Promise.allSettled([client.blockNumber(), client.blockNumber()]);
      expect((first as PromiseRejectedResult).reason).toBeInstanceOf(RpcTransportError);
      expect(((first as PromiseRejectedResult).reason as Error).message).toMatch(/^anm_blockNumber \(one of 2 reads in a batch\): HTTP/);
      if (answer === broken[0]) expect(second.status).toBe('rejected');
      else expect(second).toEqual({ status: 'fulfilled', value: 1 });
      expect(rec.bodies).toHaveLength(1);
    }
  });

  it('fails every call of a batch whose node cannot be reached, once, as a transport error', async () => {
    const rec = recording();
    const dead = new AnmRpcClient('http://127.0.0.1:9/test', { fetch: rec.fetch, batchReads: true, timeoutMs: 2_000 });
    const out = await Promise.allSettled([dead.getBalance(bob.address), dead.blockNumber()]);
    for (const r of out) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(RpcTransportError);
    expect(rec.bodies).toHaveLength(1);
  });
});
