/**
 * Routed executions finishing in the same turn share their statements (ADR 0094): the
 * `EXECUTING` writes, whose fee leg's ledger check is a guard, in one statement; the answers'
 * records with their fees' settlements on the simulated ledger in another. A fee leg the ledger
 * refuses inside a batch keeps out its own execution only, which answers exactly as alone (fee
 * refused, nothing recorded); a fee the payer's balance no longer covers once the batch's
 * earlier fees are taken is settled as alone would settle it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { signLeg } from '../fixtures/market.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1fee' };
const BATCH_SQL = 'WITH ev AS (SELECT * FROM jsonb_to_recordset';
const ONE_SQL = 'WITH up AS (UPDATE actors SET snapshot =';

describe.each(backendFactories)('routed executions recorded together on %s', (name, open) => {
  let b: Backend;
  let texts: string[];
  let together: MarketServices;
  let oneByOne: MarketServices;
  let seller: http.Server;
  let calls = 0;
  /** The seller answers once this many calls are waiting, all in one turn, as a busy seller's answers come back together. */
  let holdFor = 1;
  const held: Array<() => void> = [];

  beforeAll(async () => {
    b = await open();
    const c = counting(b.db);
    texts = c.texts;
    seller = http.createServer((req, res) => {
      calls++;
      req.resume();
      req.on('end', () => {
        held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"answer":42}'));
        if (held.length < holdFor) return;
        for (const answer of held.splice(0)) answer();
      });
    });
    await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/answer`;
    const forward = { allowPrivate: true };
    const host = new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() });
    together = openMarket(c.db, host, { feeAddresses: FEE, forward });
    oneByOne = openMarket(c.db, new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry(), updateBatch: 1 }), { feeAddresses: FEE, forward });
    const id = resourceIdOf('POST', endpoint);
    await host.apply({ kind: 'listing', id }, {
      type: 'listing.register', id: 'r1', at: Date.now(), resource_id: id, provider_id: 'prov_b0b0', name: 'answer service', description: 'The answer', category: 'answer', tags: ['answer'],
      endpoint, method: 'POST', model: 'per_call', documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
      assets: [{ asset: 'USDC', pay_to: privateKeyToAccount(generatePrivateKey()).address, seller_price_atomic: '20000' }],
    });
    for (const m of [together, oneByOne]) await m.index.refresh();
    // One execution each first: the listing's endpoint is then known, as in a running marketplace,
    // rather than read by each of the first executions, whose reads come back in different turns.
    const warm = privateKeyToAccount(generatePrivateKey());
    await together.ledger.fund(warm.address, 10n ** 12n);
    for (const m of [together, oneByOne]) await m.executions.execute({ ...(await quoted(m, warm)), body: {} });
  }, 120_000);
  afterAll(async () => {
    seller?.closeAllConnections();
    await new Promise((r) => seller?.close(r));
    await b?.close();
  });

  /** A quote made by `m`, and the buyer's legs for it: the fee leg as sent, the seller payment header. */
  async function quoted(m: MarketServices, buyer: PrivateKeyAccount) {
    const q = await m.purchases.quote({ capability: 'answer', asset: 'USDC' });
    const l = q.payment_requirements.accepts[0]!.extra.legs;
    const sellerLeg = await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount });
    return { intentId: q.intent_id, fee: await signLeg(buyer, { to: l.fee.payTo, value: l.fee.amount }), sellerPayment: Buffer.from(JSON.stringify(sellerLeg)).toString('base64'), feeAmount: BigInt(l.fee.amount) };
  }

  type Answer = { ok: { status: number; purchase_status: string } } | { refused: { code?: string | undefined; reason?: string | undefined; message: string } };

  /** Executions started in one turn: each one's answer or refusal. */
  function executeInOneTurn(m: MarketServices, runs: Array<{ intentId: string; fee: unknown; sellerPayment: string }>): Promise<Answer[]> {
    texts.length = 0;
    return Promise.all(
      runs.map((r) =>
        m.executions.execute({ ...r, body: {} }).then(
          (ok) => ({ ok: { status: ok.status, purchase_status: ok.purchase_status } }),
          (err: { code?: string; reason?: string; message: string }) => ({ refused: { code: err.code, reason: err.reason, message: err.message } }),
        ),
      ),
    );
  }

  const ok = (a: Answer) => ('ok' in a ? a.ok : undefined);
  const refusal = (a: Answer) => ('refused' in a ? a.refused : undefined);
  const recording = (marker: string) => texts.filter((t) => t.startsWith(BATCH_SQL) && t.includes(marker));
  const alone = (marker: string) => texts.filter((t) => t.startsWith(ONE_SQL) && t.includes(marker));
  const state = async (id: string) => (await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [id])).rows[0]?.state;

  it('8 executions in one turn: one statement records them EXECUTING, one records the answers with the fees settled', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    await together.ledger.fund(buyer.address, 10n ** 12n);
    const runs = [];
    for (let i = 0; i < 8; i++) runs.push(await quoted(together, buyer));
    const before = await together.ledger.balanceOf(FEE.USDC);
    holdFor = 8;
    const answers = await executeInOneTurn(together, runs).finally(() => (holdFor = 1));
    for (const a of answers) expect(ok(a)).toEqual({ status: 200, purchase_status: 'EXECUTING' });
    // The fee legs' ledger checks rode on one statement, and so did the answers' records with the fees' settlements.
    expect(recording('lc AS (')).toHaveLength(1);
    expect(alone('ledger_ok AS (')).toHaveLength(0);
    expect(recording('st AS (')).toHaveLength(1);
    expect(alone('claim AS (')).toHaveLength(0);
    for (const r of runs) expect(await state(r.intentId)).toBe('SETTLED');
    const fee = runs[0]!.feeAmount;
    expect(await together.ledger.balanceOf(FEE.USDC)).toBe(before + 8n * fee);
    expect(await together.ledger.balanceOf(buyer.address)).toBe(10n ** 12n - 8n * fee);
    const used = await b.db.query(`SELECT 1 FROM usdc_authorizations WHERE authorizer = $1`, [buyer.address.toLowerCase()]);
    expect(used.rows).toHaveLength(8);
  });

  it('a fee leg the ledger refuses inside a batch: that execution refused as alone, nothing recorded, the seller not called; the others settled', async () => {
    const rich = privateKeyToAccount(generatePrivateKey());
    const broke = privateKeyToAccount(generatePrivateKey());
    await together.ledger.fund(rich.address, 10n ** 12n);
    // Today's refusal of an unfunded fee leg, one execution at a time.
    const [refusedAlone] = await executeInOneTurn(oneByOne, [await quoted(oneByOne, broke)]);
    expect(refusal(refusedAlone!)).toMatchObject({ code: 'invalid_payment', reason: 'invalid_exact_evm_insufficient_balance' });
    const runs = [];
    for (let i = 0; i < 6; i++) runs.push(await quoted(together, i === 2 ? broke : rich));
    const called = calls;
    const answers = await executeInOneTurn(together, runs);
    expect(refusal(answers[2]!)).toEqual(refusal(refusedAlone!));
    expect(answers.filter((a) => ok(a)?.status === 200)).toHaveLength(5);
    expect(calls - called).toBe(5);
    // The batch left out the refused one, which its own statement then refused.
    expect(recording('lc AS (')).toHaveLength(1);
    expect(alone('ledger_ok AS (')).toHaveLength(1);
    const refused = runs[2]!.intentId;
    expect(await state(refused)).toBe('QUOTED');
    expect((await b.db.query(`SELECT 1 FROM market_leg_nonces WHERE intent_id = $1`, [refused])).rows).toHaveLength(0);
    expect((await b.db.query(`SELECT 1 FROM actor_events WHERE actor_id = $1 AND seq > 1`, [refused])).rows).toHaveLength(0);
    for (const r of runs) if (r.intentId !== refused) expect(await state(r.intentId)).toBe('SETTLED');
  });

  it("fees the payer's balance covers one by one but not together: the batch settles those it covers, and the one left out ends as alone", async () => {
    const rich = privateKeyToAccount(generatePrivateKey());
    await together.ledger.fund(rich.address, 10n ** 12n);
    // Alone: a payer funded for one fee, two executions recorded before either fee is taken: one fee is settled, the other refused.
    const lean = privateKeyToAccount(generatePrivateKey());
    const pairAlone = [await quoted(oneByOne, lean), await quoted(oneByOne, lean)];
    await together.ledger.fund(lean.address, pairAlone[0]!.feeAmount);
    // The seller answers once both calls are in, so both are recorded EXECUTING before either fee is taken, however the turns fall.
    holdFor = 2;
    const pairAnswers = await executeInOneTurn(oneByOne, pairAlone).finally(() => (holdFor = 1));
    for (const a of pairAnswers) expect(ok(a)).toEqual({ status: 200, purchase_status: 'EXECUTING' });
    const endsAlone = [await state(pairAlone[0]!.intentId), await state(pairAlone[1]!.intentId)].sort();
    expect(endsAlone).toContain('SETTLED');
    expect(endsAlone.filter((s) => s !== 'SETTLED')).toHaveLength(1);

    const tight = privateKeyToAccount(generatePrivateKey());
    const runs = [];
    for (let i = 0; i < 6; i++) runs.push(await quoted(together, i % 3 === 1 ? tight : rich));
    await together.ledger.fund(tight.address, runs[0]!.feeAmount);
    holdFor = 6;
    const answers = await executeInOneTurn(together, runs).finally(() => (holdFor = 1));
    for (const a of answers) expect(ok(a)).toEqual({ status: 200, purchase_status: 'EXECUTING' });
    expect(recording('st AS (').length).toBeLessThanOrEqual(2);
    expect(alone('claim AS (')).toHaveLength(1);
    // The tight payer's two fees: the first in actor id order is settled in the batch, the other as alone.
    const pair = runs.filter((_, i) => i % 3 === 1).map((r) => r.intentId).sort();
    const ends = [await state(pair[0]!), await state(pair[1]!)];
    expect(ends[0]).toBe('SETTLED');
    expect([...ends].sort()).toEqual(endsAlone);
    expect(await together.ledger.balanceOf(tight.address)).toBe(0n);
    for (const [i, r] of runs.entries()) if (i % 3 !== 1) expect(await state(r.intentId)).toBe('SETTLED');
  });

  // Two transactions at once: the real database only.
  it.skipIf(name !== 'postgres+nats')("a payer debited by another transaction while the answers' statement waits for its row: that statement fails whole, and each answer is recorded alone, its fee refused as alone", async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await together.ledger.fund(payer.address, 10n ** 12n);
    const runs: Array<Awaited<ReturnType<typeof quoted>>> = [];
    for (let i = 0; i < 3; i++) runs.push(await quoted(together, payer));
    holdFor = 3;
    let answered!: Promise<Answer[]>;
    // Another transaction empties the payer's balance and holds its row until the batch waits for it.
    await b.db.tx(async (q) => {
      await q.query(`UPDATE usdc_balances SET balance = 0 WHERE address = $1`, [payer.address.toLowerCase()]);
      answered = executeInOneTurn(together, runs);
      const waiting = async () => (await b.db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%st AS (%'`)).rows.length > 0;
      while (!(await waiting())) await new Promise((r) => setTimeout(r, 10));
    });
    holdFor = 1;
    for (const a of await answered) expect(ok(a)).toEqual({ status: 200, purchase_status: 'EXECUTING' });
    expect(recording('st AS (')).toHaveLength(1);
    expect(alone('claim AS (')).toHaveLength(3);
    for (const r of runs) expect(await state(r.intentId)).not.toBe('SETTLED');
    expect((await b.db.query(`SELECT 1 FROM usdc_authorizations WHERE authorizer = $1`, [payer.address.toLowerCase()])).rows).toHaveLength(0);
    expect(await together.ledger.balanceOf(payer.address)).toBe(0n);
  });
});
