/**
 * Purchases recorded in the same turn share one statement (ADR 0090): each still goes `VERIFIED`
 * with both legs' nonce bindings and its first response's record (ADR 0034), and answers as it
 * would alone. A leg replayed inside the batch is refused exactly as alone (DESIGN §5
 * "Purchase": a leg is never accepted by a second purchase; ADR 0017), the others bought.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { registerUsdcListing, signLeg } from '../fixtures/market.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1fee' };
const BATCH_SQL = 'WITH ev AS (SELECT * FROM jsonb_to_recordset';
const ONE_SQL = 'WITH up AS (UPDATE actors SET snapshot =';
type Legs = { seller: unknown; fee: unknown };

describe.each(backendFactories)('purchases recorded together on %s', (_name, open) => {
  let b: Backend;
  let statements: string[];
  let together: MarketServices;
  let oneByOne: MarketServices;
  const buyer = privateKeyToAccount(generatePrivateKey());
  let n = 0;

  beforeAll(async () => {
    b = await open();
    const c = counting(b.db);
    statements = c.statements;
    const host = new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() });
    together = openMarket(c.db, host, { feeAddresses: FEE });
    oneByOne = openMarket(c.db, new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry(), updateBatch: 1 }), { feeAddresses: FEE });
    await registerUsdcListing(host, privateKeyToAccount(generatePrivateKey()).address);
    for (const m of [together, oneByOne]) await m.index.refresh();
    await together.ledger.fund(buyer.address, 10n ** 12n);
  });
  afterAll(async () => b?.close());

  /** A quote made by `m` and legs signed for it. */
  async function quoted(m: MarketServices): Promise<{ intentId: string; legs: Legs }> {
    const q = await m.purchases.quote({ capability: 'weather', asset: 'USDC' });
    const l = q.payment_requirements.accepts[0]!.extra.legs;
    return { intentId: q.intent_id, legs: { seller: await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount }), fee: await signLeg(buyer, { to: l.fee.payTo, value: l.fee.amount }) } };
  }

  /**
   * What `POST /api/v1/purchase` does once its key is claimed (gateway/market/purchases.ts), for
   * several purchases whose claims are answered in one turn: the answer as the route sends it,
   * or the refusal.
   */
  async function buyInOneTurn(m: MarketServices, buys: Array<{ intentId: string; legs: Legs }>) {
    const claimed = [];
    for (const p of buys) {
      const ledger = m.purchases.ledgerReadFor(p.legs);
      const key = `k${n++}`;
      const claim = await m.purchaseKeys.claim(p.intentId, key, `h${key}`, ledger?.read, m.purchases.kept(p.intentId));
      if (claim.outcome !== 'claimed') throw new Error(claim.outcome);
      claimed.push({ ...p, key, ledger, claim });
    }
    statements.length = 0;
    return Promise.all(
      claimed.map(async ({ intentId, legs, key, ledger, claim }) => {
        let rendered: string | undefined;
        const record = m.purchaseKeys.recording(intentId, key, 200, {}, (v) => (rendered = JSON.stringify(m.purchases.responseOf(v))));
        const known = ledger && claim.ledger ? ledger.known(claim.ledger) : undefined;
        try {
          const done = await m.purchases.purchase(intentId, legs, { seen: claim.purchase, record, ...(known && { known }), ...(ledger && { decoded: ledger.decoded }) });
          return { ok: (done.recorded ? JSON.parse(rendered!) : done.response) as { intent_id: string; status: string }, key };
        } catch (err) {
          const e = err as { code?: string; reason?: string; message: string };
          return { refused: { code: e.code, reason: e.reason, message: e.message }, key };
        }
      }),
    );
  }

  it('12 purchases in one turn are one write: each VERIFIED, both nonces bound, its first response recorded as answered', async () => {
    const buys = [];
    for (let i = 0; i < 12; i++) buys.push(await quoted(together));
    const answers = await buyInOneTurn(together, buys);
    expect(statements.filter((s) => s.startsWith(BATCH_SQL))).toHaveLength(1);
    expect(statements.filter((s) => s.startsWith(ONE_SQL))).toHaveLength(0);
    expect(statements).toHaveLength(1);
    for (const [i, a] of answers.entries()) {
      const intent = buys[i]!.intentId;
      expect(a.ok).toMatchObject({ intent_id: intent, status: 'VERIFIED' });
      const row = (await b.db.query<{ state: string; version: number }>(`SELECT state, version FROM actors WHERE id = $1`, [intent])).rows[0];
      expect(row).toEqual({ state: 'VERIFIED', version: 2 });
      expect((await b.db.query<{ leg: string }>(`SELECT leg FROM market_leg_nonces WHERE intent_id = $1 ORDER BY leg`, [intent])).rows.map((r) => r.leg)).toEqual(['fee', 'seller']);
      const kept = await b.db.query<{ state: string; status: number; body: string }>(`SELECT state, status, convert_from(body, 'UTF8') AS body FROM idempotency_keys WHERE merchant = $1 AND mode = 'market' AND key = $2`, [intent, a.key]);
      expect(kept.rows).toEqual([{ state: 'done', status: 200, body: JSON.stringify(a.ok) }]);
    }
  });

  it('a leg replayed inside a batch: that purchase refused as alone (nonce used), nothing of it kept; the others bought', async () => {
    const first = await quoted(together);
    expect((await buyInOneTurn(together, [first]))[0]!.ok).toMatchObject({ status: 'VERIFIED' });
    // Today's refusal of the same replay, one purchase at a time.
    const alone = await quoted(oneByOne);
    const [refusedAlone] = await buyInOneTurn(oneByOne, [{ intentId: alone.intentId, legs: first.legs }]);
    expect(refusedAlone!.refused).toMatchObject({ code: 'leg_replayed', reason: 'invalid_exact_evm_nonce_already_used' });
    const buys = [];
    for (let i = 0; i < 6; i++) buys.push(await quoted(together));
    const replayed = buys[2]!;
    const answers = await buyInOneTurn(together, buys.map((p) => (p === replayed ? { ...p, legs: first.legs } : p)));
    expect(answers[2]!.refused).toEqual(refusedAlone!.refused);
    expect(answers.filter((a) => a.ok?.status === 'VERIFIED')).toHaveLength(5);
    // The batch failed on the binding, and each purchase was then recorded alone.
    expect(statements.filter((s) => s.startsWith(BATCH_SQL))).toHaveLength(1);
    expect(statements.filter((s) => s.startsWith(ONE_SQL))).toHaveLength(6);
    const replayedRow = await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [replayed.intentId]);
    expect(replayedRow.rows).toEqual([{ state: 'QUOTED' }]);
    expect((await b.db.query(`SELECT 1 FROM market_leg_nonces WHERE intent_id = $1`, [replayed.intentId])).rows).toHaveLength(0);
  });
});
