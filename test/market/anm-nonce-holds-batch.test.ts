/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * ANM purchases recorded together (ADR 0108): the statement that records several purchases'
 * legs in one turn (ADR 0090) holds their account nonces too (ADR 0043). Purchases over free
 * nonces are all VERIFIED, each holding its own two nonces; a purchase over nonces another one
 * of the same statement holds fails that statement whole, and each is then recorded alone, where
 * one wins and the other is refused with nothing of it held.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Wallet } from '../../runtime/chain/codec/keys.ts';
import { ExactAnmSplitScheme } from '../../runtime/market/client/exact-anm-split.ts';
import type { AnmWallet } from '../../runtime/market/client/anm-wallet.ts';
import { seller, signedListing, toBase64 } from '../fixtures/market.ts';
import { ANM, anmBuyer } from '../fixtures/market-anm.ts';
import { useMarket } from './harness.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON bodies
type Json = any;
type Buyer = { keys: Wallet; wallet: AnmWallet };
const h = useMarket({ anm: { confirmations: 2 } });
const BUYERS = 8;
let buyers: Buyer[];

beforeAll(async () => {
  const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), { name: 'Batch oracle', tags: ['batchoracle'], asset: 'ANM', price: '0.5' }) });
  expect(res.status).toBe(201);
  buyers = [];
  for (let i = 0; i < BUYERS; i++) buyers.push(await anmBuyer(h.chain.rpc, 10n * ANM));
}, 60_000);

const quote = async (): Promise<Json> => {
  const res = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'batchoracle', asset: 'ANM' } });
  expect(res.status).toBe(201);
  return res.json;
};
const sign = async (b: Buyer, q: Json, nonce?: bigint) => {
  const wallet = nonce === undefined ? b.wallet : { ...b.wallet, nextNonce: () => Promise.resolve(nonce) };
  return (await new ExactAnmSplitScheme(wallet).createPaymentPayload(2, q.payment_requirements.accepts[0])).payload.legs as Record<'seller' | 'fee', Json>;
};
const purchase = (q: Json, legs: Record<'seller' | 'fee', Json>) =>
  h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}` }, body: { intent_id: q.intent_id, payment: { legs: { seller: toBase64(legs.seller), fee: legs.fee } } } });
const holdsOf = async (payer: string) =>
  (await h.backend.db.query<{ nonce: string; intent_id: string; leg: string }>(`SELECT nonce::text, intent_id, leg FROM market_anm_nonce_holds WHERE payer = $1 ORDER BY nonce`, [payer])).rows;

/**
 * Runs `round` until one of its statements that recorded several purchases' holds `until`
 * (committed, or failed: the whole-statement refusal), at most `tries` times. A batch
 * statement's first parameter is its events, a JSON array (update-batch.ts).
 */
async function batched(tries: number, until: 'committed' | 'failed', round: () => Promise<void>): Promise<{ committed: number; failed: number }> {
  const db = h.backend.db;
  const query = db.query.bind(db);
  const seen = { committed: 0, failed: 0 };
  db.query = (async (text: string, params?: unknown[]) => {
    const events = params?.[0];
    const batch = text.includes('market_anm_nonce_holds') && typeof events === 'string' && events.startsWith('[') && (JSON.parse(events) as unknown[]).length > 1;
    try {
      const r = await query(text as never, params as never);
      if (batch) seen.committed++;
      return r;
    } catch (e) {
      if (batch) seen.failed++;
      throw e;
    }
  }) as typeof db.query;
  try {
    for (let i = 0; i < tries && seen[until] === 0; i++) await round();
  } finally {
    db.query = query;
  }
  return seen;
}

describe('ANM purchases recorded in one statement (ADR 0108)', () => {
  it('purchases of one turn over free nonces: every one VERIFIED, each holding exactly its own two nonces', async () => {
    let round = 0;
    const seen = await batched(4, 'committed', async () => {
      round++;
      const quotes = await Promise.all(buyers.map(() => quote()));
      // Each buyer signs at its own nonces 2k, 2k+1 for round k: a round never meets an earlier one's holds.
      const legs = await Promise.all(buyers.map((b, i) => sign(b, quotes[i], BigInt(2 * (round - 1)))));
      const answers = await Promise.all(buyers.map((_, i) => purchase(quotes[i], legs[i]!)));
      expect(answers.map((a) => [a.status, a.json.status])).toEqual(buyers.map(() => [200, 'VERIFIED']));
      for (const [i, b] of buyers.entries()) {
        const mine = (await holdsOf(b.keys.address)).slice(-2);
        expect(mine).toEqual([
          { nonce: String(2 * (round - 1)), intent_id: quotes[i].intent_id, leg: 'seller' },
          { nonce: String(2 * (round - 1) + 1), intent_id: quotes[i].intent_id, leg: 'fee' },
        ]);
      }
    });
    expect(seen.committed).toBeGreaterThan(0);
  });

  it('two purchases of one turn over the same nonces, among others: one VERIFIED, the other refused with nothing of it held', async () => {
    let round = 0;
    const seen = await batched(4, 'failed', async () => {
      round++;
      const base = BigInt(100 + 2 * round);
      const racer = buyers[0]!;
      const quotes = await Promise.all([...buyers, racer].map(() => quote()));
      const legs = await Promise.all([...buyers, racer].map((b, i) => sign(b, quotes[i], base)));
      const answers = await Promise.all(quotes.map((q, i) => purchase(q, legs[i]!)));
      // The others are unaffected by the pair's clash.
      expect(answers.slice(1, BUYERS).map((a) => a.status)).toEqual(buyers.slice(1).map(() => 200));
      const pair = [answers[0]!, answers[BUYERS]!];
      expect(pair.map((a) => a.status).sort()).toEqual([200, 409]);
      const lost = pair[0]!.status === 409 ? pair[0]! : pair[1]!;
      expect(lost.json.error.code).toBe('leg_replayed');
      expect(lost.json.error.message).toContain('invalid_exact_anm_nonce_held');
      const [won, loser] = pair[0]!.status === 200 ? [quotes[0], quotes[BUYERS]] : [quotes[BUYERS], quotes[0]];
      const held = (await holdsOf(racer.keys.address)).filter((r) => BigInt(r.nonce) >= base && BigInt(r.nonce) <= base + 1n);
      expect(held.map((r) => r.intent_id)).toEqual([won.intent_id, won.intent_id]);
      expect((await h.req('GET', `/api/v1/purchases/${loser.intent_id}`)).json.status).toBe('QUOTED');
    });
    // The pair in one statement fails it whole (a row affected twice); each is then written alone.
    expect(seen.failed).toBeGreaterThan(0);
  });
});
