/**
 * Pieces the model suites over the real indexer share (test/property/signal-order*.model.test.ts,
 * ADR 0016 and 0033): the random chain commands, a clean chain state per scenario, and the
 * random permutation with duplicates each delivery gets.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect } from 'vitest';
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';
import { ChainIndexer } from '../../runtime/chain/indexer/indexer.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import type { Db } from '../../storage/db.ts';
import { openEmbedded, type Backend } from './backends.ts';
import { recordingBus } from './hand-indexer.ts';

export const RUNS = Number(process.env.SIGNAL_ORDER_RUNS ?? 6);
export const PERMUTATIONS = Number(process.env.SIGNAL_ORDER_PERMUTATIONS ?? 3);

export type ChainCmd = { k: 'mine'; n: number } | { k: 'tick' } | { k: 'reorg'; depth: number; onTx: boolean; drop: boolean };

/** Blocks, an extra indexer pass, and reorgs of depth 1 to 20 (on the watched transaction's block, or dropping it). */
export const chainCmds = {
  mine: { weight: 3, arbitrary: fc.record({ k: fc.constant('mine' as const), n: fc.integer({ min: 1, max: 8 }) }) },
  tick: { weight: 1, arbitrary: fc.constant({ k: 'tick' as const }) },
  reorg: { weight: 3, arbitrary: fc.record({ k: fc.constant('reorg' as const), depth: fc.integer({ min: 1, max: 20 }), onTx: fc.boolean(), drop: fc.boolean() }) },
};

export const seedsArb = fc.array(fc.integer(), { minLength: PERMUTATIONS, maxLength: PERMUTATIONS });

/** The indexer's tables of the test network, emptied: each scenario follows a fresh devnet. */
async function resetChainTables(db: Pick<Db, 'query'>): Promise<void> {
  for (const t of ['chain_cursor', 'chain_blocks', 'chain_watch', 'chain_positions', 'chain_leases', 'chain_pending']) await db.query(`DELETE FROM ${t} WHERE network = 'test'`);
}

/** `xs` with a random subset repeated, in a random order (deterministic per seed). */
export function shuffledWithDups<T>(xs: readonly T[], seed: number): T[] {
  const dups = fc.sample(fc.subarray([...xs]), { numRuns: 1, seed })[0]!;
  const all = [...xs, ...dups];
  return fc.sample(fc.shuffledSubarray(all, { minLength: all.length }), { numRuns: 1, seed: seed + 1 })[0]!;
}

/** PGlite and an ActorHost on it, for one describe block. */
export function useModelBackend(): { b: Backend; host: ActorHost } {
  const m = {} as { b: Backend; host: ActorHost };
  beforeAll(async () => {
    m.b = await openEmbedded();
    m.host = new ActorHost({ db: m.b.db, bus: m.b.bus, registry: machineRegistry() });
  }, 120_000);
  afterAll(async () => m.b?.close());
  return m;
}

/** A 1 ANM test-mode intent paying `merchant` (fee to `treasury`) under `reference`. */
export async function createModelIntent(host: ActorHost, id: string, reference: string, merchant: string, treasury: string): Promise<void> {
  const now = Date.now();
  await host.apply(
    { kind: 'payment_intent', id, merchant: 'm_test', mode: 'test' },
    { type: 'intent.create', id: `create:${id}`, at: now, intent_id: id, merchant_id: 'm_test', mode: 'test', currency: 'ANM', requested_amount: null, anm_amount: '1000000000', payment_address: merchant, treasury_address: treasury, payment_reference: reference, expires_at: now + 3_600_000, required_confirmations: 12 },
  );
}

/** The scenario's tail: `tail` more blocks, then two passes so every signal about them is out. */
export async function finishChain(rpc: Pick<AnmRpcClient, 'mine'>, indexer: ChainIndexer, tail: number): Promise<void> {
  if (tail > 0) await rpc.mine(tail);
  await indexer.tick();
  await indexer.tick();
  expect(indexer.halted()).toBeNull();
}

/** A fresh devnet (mining only when asked) and the real indexer following it, its signals recorded in `log`. */
export async function modelChain(db: Db): Promise<{ rpc: AnmRpcClient; log: ActorEnvelope[]; indexer: ChainIndexer; close: () => Promise<void> }> {
  await resetChainTables(db);
  const devnet = await startDevnetServer({ port: 0, blockMs: 0 });
  const rpc = new AnmRpcClient(`${devnet.url}/test`);
  const log: ActorEnvelope[] = [];
  const indexer = new ChainIndexer({ network: 'test', rpc, db, bus: recordingBus(log), holder: 'model', startHeight: 0 });
  return {
    rpc,
    log,
    indexer,
    close: async () => {
      await indexer.stop();
      await devnet.close();
    },
  };
}
