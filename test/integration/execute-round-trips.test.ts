/**
 * A regression guard for `npm run bench:execute`'s USDC row that no load on the machine can
 * move: the SQL statements of `POST /api/v1/route/execute`, counted at the database port, and
 * which of them stand before the seller's answer goes back (ADR 0046). Before it: the one
 * statement that writes EXECUTING with the fee nonce's binding and checks the fee leg on the
 * ledger (ADR 0059; in a process that did not quote, a read of the purchase first): one durable
 * commit. After it: the answer's record, with the fee's settlement in the same statement (ADR
 * 0052). A change that adds a round trip, or moves one back in front of the answer, fails here;
 * so does a ledger refusal that no longer comes first.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { purchaseDefinition } from '../../machines/purchase/definition.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { signLeg } from '../fixtures/market.ts';
import { backendFactories, waitFor, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1fee' };

describe.each(backendFactories)('SQL statements per routed execution on %s', (_name, open) => {
  let b: Backend;
  let statements: string[] = [];
  /** The same statements whole. */
  let texts: string[] = [];
  let seller: http.Server;
  let quoting: MarketServices;
  const markets: MarketServices[] = [];
  const apps: FastifyInstance[] = [];
  const buyer = privateKeyToAccount(generatePrivateKey());
  let atAnswer: string[] = [];
  /** Run by the seller before it answers: what happens on the ledger while the call is out. */
  let duringCall: (() => Promise<unknown>) | null = null;

  beforeAll(async () => {
    b = await open();
    seller = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => void (duringCall?.() ?? Promise.resolve()).then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"answer":42}')));
    });
    await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/answer`;
    const c = counting(b.db);
    statements = c.statements;
    texts = c.texts;
    const host = new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() });
    const forward = { allowPrivate: true };
    quoting = openMarket(c.db, host, { feeAddresses: FEE, forward });
    const id = resourceIdOf('POST', endpoint);
    await host.apply({ kind: 'listing', id }, {
      type: 'listing.register', id: 'r1', at: Date.now(), resource_id: id, provider_id: 'prov_b0b0', name: 'answer service', description: 'The answer',
      category: 'answer', tags: ['answer'], endpoint, method: 'POST', model: 'per_call', assets: [{ asset: 'USDC', pay_to: buyer.address, seller_price_atomic: '20000' }],
      documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
    });
    await quoting.index.refresh();
    // Another marketplace process over the same database: its engine never saw the quotes.
    const other = openMarket(c.db, new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() }), { feeAddresses: FEE, forward });
    markets.push(quoting, other);
    for (const m of markets) {
      // The statements sent by the time the answer is handed over.
      const run = m.executions.execute.bind(m.executions);
      m.executions.execute = (input, deliver) =>
        run(input, (r) => {
          atAnswer = [...statements];
          deliver?.(r);
        });
      apps.push(await buildMarketApp({ ...m, perIpPerMinute: 1e6 }));
    }
    await quoting.ledger.fund(buyer.address, 10n ** 12n);
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    seller?.close();
    await b?.close();
  });

  /** One execution through `apps[app]`: the statements before its answer came back, and all of them once the fee settled. */
  async function execute(app: number): Promise<{ before: string[]; all: string[]; intentId: string }> {
    const q = await quoting.purchases.quote({ capability: 'answer', asset: 'USDC' });
    const l = q.payment_requirements.accepts[0]!.extra.legs;
    const fee = await signLeg(buyer, { to: l.fee.payTo, value: l.fee.amount });
    const header = Buffer.from(JSON.stringify(await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount }))).toString('base64');
    statements.length = 0;
    texts.length = 0;
    const res = await apps[app]!.inject({ method: 'POST', url: '/api/v1/route/execute', headers: { 'content-type': 'application/json' }, payload: { intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header } });
    const before = atAnswer;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ purchase_status: string; status: number }>()).toMatchObject({ status: 200, purchase_status: 'EXECUTING' });
    await waitFor(async () => (await markets[app]!.purchases.read(q.intent_id))?.status === 'SETTLED', 10_000, 'the fee settled');
    // The look-ups of the wait are the test's, not the execution's.
    const all = statements.filter((s) => !s.startsWith('SELECT state, snapshot FROM actors'));
    return { before: before.map((s) => s.slice(0, 26)), all: all.map((s) => s.slice(0, 26)), intentId: q.intent_id };
  }

  const write = 'WITH up AS (UPDATE actors ';
  const ledgerRead = 'SELECT EXISTS (SELECT 1 FR';

  it('in the process that made the quote: one statement before the answer (one commit), two in all', async () => {
    await execute(0);
    const { before, all, intentId } = await execute(0);
    expect(before).toEqual([write]);
    // After the answer: its record, with the fee's settlement in the same statement.
    expect(all).toEqual([write, write]);
    const fee = (await quoting.purchases.read(intentId))!.ctx.execution!.fee;
    const { rows } = await b.db.query<{ tx_hash: string; recipient: string }>(`SELECT tx_hash, recipient FROM usdc_authorizations WHERE authorizer = $1 AND nonce = $2`, [fee.payer, fee.nonce]);
    expect(rows).toEqual([{ tx_hash: fee.tx, recipient: FEE.USDC }]);
  });

  it('EXECUTING commits without waiting for the flush; the answer that takes the fee waits for it (ADR 0074)', async () => {
    await execute(0);
    await execute(0);
    const writes = texts.filter((s) => s.startsWith(write.trimEnd()));
    expect(writes).toHaveLength(2);
    expect(writes.map((s) => s.includes(`set_config('synchronous_commit', 'off', true)`))).toEqual([true, false]);
  });

  it("the purchase machine steps once per recorded event (the quote, the execution, the answer): the response's status comes from the rule, not a step more", async () => {
    await execute(0);
    const steps = vi.spyOn(purchaseDefinition.machine, 'transition');
    try {
      await execute(0);
      expect(steps).toHaveBeenCalledTimes(3);
    } finally {
      steps.mockRestore();
    }
  });

  it("the listing's paid-call success rides on the answer's record: one outbox row for the listing", async () => {
    const { intentId } = await execute(0);
    const { rows } = await b.db.query<{ msg_id: string; subject: string; ok: boolean }>(`SELECT msg_id, subject, (payload->'event'->>'ok')::boolean AS ok FROM outbox WHERE actor_id = $1 AND msg_id LIKE 'executed:%'`, [intentId]);
    expect(rows.map((r) => [r.msg_id, r.subject.startsWith('actor.listing.'), r.ok])).toEqual([[`executed:${intentId}`, true, true]]);
  });

  it('in another process: the purchase read too, then the same', async () => {
    // Its first execution reads the listing's endpoint, kept from then on.
    await execute(1);
    const { before, all } = await execute(1);
    expect(before).toEqual(['SELECT state, snapshot, ve', write]);
    expect(all).toEqual(['SELECT state, snapshot, ve', write, write]);
  });

  describe('the fee the ledger no longer takes after the answer: the statement that would record it writes nothing, the settlement on its own says why', () => {
    async function executeWith(during: (fee: { from: string; nonce: string; auth: Parameters<MarketServices['ledger']['transferWithAuthorization']>[0] }) => Promise<unknown>) {
      const payer = privateKeyToAccount(generatePrivateKey());
      const q = await quoting.purchases.quote({ capability: 'answer', asset: 'USDC' });
      const l = q.payment_requirements.accepts[0]!.extra.legs;
      await quoting.ledger.fund(payer.address, BigInt(l.fee.amount));
      const fee = await signLeg(payer, { to: l.fee.payTo, value: l.fee.amount });
      const auth = (fee as { payload: { authorization: Parameters<MarketServices['ledger']['transferWithAuthorization']>[0] } }).payload.authorization;
      const header = Buffer.from(JSON.stringify(await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount }))).toString('base64');
      const fee0 = await quoting.ledger.balanceOf(FEE.USDC);
      duringCall = () => during({ from: payer.address.toLowerCase(), nonce: auth.nonce.toLowerCase(), auth });
      try {
        const res = await apps[0]!.inject({ method: 'POST', url: '/api/v1/route/execute', headers: { 'content-type': 'application/json' }, payload: { intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header } });
        expect(res.statusCode, res.body).toBe(200);
      } finally {
        duringCall = null;
      }
      await waitFor(async () => ['SETTLED', 'FEE_FAILED'].includes((await quoting.purchases.read(q.intent_id))?.status ?? ''), 10_000, 'the fee step done');
      const p = (await quoting.purchases.read(q.intent_id))!;
      return { status: p.status, tx: p.ctx.execution?.fee.tx ?? null, feeTaken: (await quoting.ledger.balanceOf(FEE.USDC)) - fee0, intentId: q.intent_id };
    }

    it("the payer's balance spent while the seller was called: FEE_FAILED, nothing moved", async () => {
      const r = await executeWith(({ from }) => b.db.query(`UPDATE usdc_balances SET balance = 0 WHERE address = $1`, [from]));
      expect(r).toMatchObject({ status: 'FEE_FAILED', tx: null, feeTaken: 0n });
    });

    it('the fee authorization settled elsewhere while the seller was called: SETTLED with that transaction, the fee taken once', async () => {
      let settledTx = '';
      const r = await executeWith(async ({ auth }) => {
        const s = await quoting.ledger.transferWithAuthorization(auth, Math.floor(Date.now() / 1000));
        if (s.ok) settledTx = s.tx;
      });
      expect(settledTx).not.toBe('');
      expect(r.status).toBe('SETTLED');
      expect(r.tx).toBe(settledTx);
      expect(r.feeTaken).toBe(BigInt((await quoting.purchases.read(r.intentId))!.ctx.fee.amount));
    });
  });

  it('a fee nonce bound already: to this intent by an earlier attempt, bound again and executed; to another intent, 409 and nothing written', async () => {
    const quoteWithFee = async () => {
      const q = await quoting.purchases.quote({ capability: 'answer', asset: 'USDC' });
      const l = q.payment_requirements.accepts[0]!.extra.legs;
      return { q, fee: await signLeg(buyer, { to: l.fee.payTo, value: l.fee.amount }), header: Buffer.from(JSON.stringify(await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount }))).toString('base64') };
    };
    const send = (intent: string, fee: unknown, header: string) =>
      apps[0]!.inject({ method: 'POST', url: '/api/v1/route/execute', headers: { 'content-type': 'application/json' }, payload: { intent_id: intent, fee_payment: { legs: { fee } }, seller_payment: header } });
    const mine = await quoteWithFee();
    const p = (await quoting.purchases.read(mine.q.intent_id))!;
    await quoting.purchases.bind('USDC', mine.q.intent_id, await quoting.purchases.verifyLeg(p.ctx, 'fee', mine.fee), 'fee');
    statements.length = 0;
    const ok = await send(mine.q.intent_id, mine.fee, mine.header);
    expect(ok.statusCode, ok.body).toBe(200);
    // The refused write, the ledger read that clears it, the binding on its own, the write without bindings.
    expect(atAnswer.map((x) => x.slice(0, 26))).toEqual([write, ledgerRead, 'WITH x AS (SELECT * FROM u', write]);
    await waitFor(async () => (await quoting.purchases.read(mine.q.intent_id))?.status === 'SETTLED', 10_000, 'the fee settled');

    // A fee leg not used yet on the ledger, but bound to a third intent (its purchase or execution under way).
    const [other, third] = [await quoteWithFee(), await quoteWithFee()];
    const p3 = (await quoting.purchases.read(third.q.intent_id))!;
    await quoting.purchases.bind('USDC', third.q.intent_id, await quoting.purchases.verifyLeg(p3.ctx, 'fee', other.fee), 'fee');
    const before = (await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = $1`, [other.q.intent_id])).rows[0]!.n;
    const replayed = await send(other.q.intent_id, other.fee, other.header);
    expect(replayed.statusCode, replayed.body).toBe(409);
    expect(replayed.json<{ error: { code: string } }>().error.code).toBe('leg_replayed');
    expect((await quoting.purchases.read(other.q.intent_id))!.status).toBe('QUOTED');
    expect((await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = $1`, [other.q.intent_id])).rows[0]!.n).toBe(before);
  });
  describe("the fee leg's ledger check, made by the statement that records the execution: its refusals as before, first, and nothing written", () => {
    async function refused(o: { fund: bigint; validBefore?: number; settleFirst?: boolean }) {
      const payer = privateKeyToAccount(generatePrivateKey());
      const q = await quoting.purchases.quote({ capability: 'answer', asset: 'USDC' });
      const l = q.payment_requirements.accepts[0]!.extra.legs;
      if (o.fund > 0n) await quoting.ledger.fund(payer.address, o.fund);
      const fee = await signLeg(payer, { to: l.fee.payTo, value: l.fee.amount, ...(o.validBefore !== undefined && { validBefore: o.validBefore }) });
      if (o.settleFirst) {
        const auth = (fee as { payload: { authorization: Parameters<MarketServices['ledger']['transferWithAuthorization']>[0] } }).payload.authorization;
        expect((await quoting.ledger.transferWithAuthorization(auth, Math.floor(Date.now() / 1000))).ok).toBe(true);
      }
      const header = Buffer.from(JSON.stringify(await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount }))).toString('base64');
      let called = false;
      duringCall = () => Promise.resolve((called = true));
      try {
        const res = await apps[0]!.inject({ method: 'POST', url: '/api/v1/route/execute', headers: { 'content-type': 'application/json' }, payload: { intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header } });
        const events = (await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = $1`, [q.intent_id])).rows[0]!.n;
        const bound = (await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM market_leg_nonces WHERE intent_id = $1`, [q.intent_id])).rows[0]!.n;
        return { status: res.statusCode, code: res.json<{ error: { code: string; message: string } }>().error.code, message: res.json<{ error: { message: string } }>().error.message, state: (await quoting.purchases.read(q.intent_id))!.status, events, bound, called };
      } finally {
        duringCall = null;
      }
    }
    const nothing = { state: 'QUOTED', events: 1, bound: 0, called: false };

    it('a payer whose balance is short: 402 insufficient balance', async () => {
      const r = await refused({ fund: 1n });
      expect(r).toMatchObject({ status: 402, code: 'invalid_payment', ...nothing });
      expect(r.message).toContain('invalid_exact_evm_insufficient_balance');
    });

    it('a fee authorization used on the ledger already: 409 leg_replayed, nonce already used', async () => {
      const r = await refused({ fund: 10n ** 9n, settleFirst: true });
      expect(r).toMatchObject({ status: 409, code: 'leg_replayed', ...nothing });
      expect(r.message).toContain('invalid_exact_evm_nonce_already_used');
    });

    it("the ledger's refusal still comes before a later one (a fee leg valid too briefly for the execution)", async () => {
      const r = await refused({ fund: 0n, validBefore: Math.floor(Date.now() / 1000) + 20 });
      expect(r).toMatchObject({ status: 402, code: 'invalid_payment', ...nothing });
      expect(r.message).toContain('invalid_exact_evm_insufficient_balance');
    });
  });
});
