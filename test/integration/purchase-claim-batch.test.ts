/**
 * Purchase key claims arriving in the same turn share one statement (ADR 0093): each claim gets
 * the answer it gets alone (ADR 0055: a new key claimed by the insert, any other by
 * `anm_idem_claim`), with the purchase actor's row unless kept and the legs' ledger states
 * (ADR 0044), and leaves the same record behind.
 */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { PurchaseKeys, type PurchaseClaim } from '../../runtime/market/purchase-keys.ts';
import { registerUsdcListing, signLeg } from '../fixtures/market.ts';
import { backendFactories, waitFor, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1fee' };
const BATCH_SQL = 'WITH x AS (SELECT * FROM unnest($1::text[], $2::text[]';
const NEW_KEY_SQL = 'WITH c AS (INSERT INTO idempotency_keys';
const FUNCTION_SQL = 'SELECT c.*, a.state';
type Legs = { seller: unknown; fee: unknown };

/** One claim: `legs` undefined claims without a ledger read; `kept`: with the actor's row as this process holds it. */
interface Ask {
  intentId: string;
  key: string;
  hash: string;
  legs?: Legs;
  kept?: boolean;
}

describe.each(backendFactories)('purchase key claims in one turn on %s', (name, open) => {
  let b: Backend;
  let statements: string[];
  let m: MarketServices;
  let alone: PurchaseKeys;
  let other: PurchaseKeys;
  const rich = privateKeyToAccount(generatePrivateKey());
  const poor = privateKeyToAccount(generatePrivateKey());
  const none = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    b = await open();
    const c = counting(b.db);
    statements = c.statements;
    const host = new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() });
    m = openMarket(c.db, host, { feeAddresses: FEE });
    alone = new PurchaseKeys(c.db, 1);
    other = new PurchaseKeys(c.db);
    await registerUsdcListing(host, privateKeyToAccount(generatePrivateKey()).address);
    await m.index.refresh();
    await m.ledger.fund(rich.address, 10n ** 12n);
    await m.ledger.fund(poor.address, 5n);
  });
  afterAll(async () => b?.close());

  async function quoted(buyer: PrivateKeyAccount): Promise<{ intentId: string; legs: Legs }> {
    const q = await m.purchases.quote({ capability: 'weather', asset: 'USDC' });
    const l = q.payment_requirements.accepts[0]!.extra.legs;
    return { intentId: q.intent_id, legs: { seller: await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount }), fee: await signLeg(buyer, { to: l.fee.payTo, value: l.fee.amount }) } };
  }

  const claim = (keys: PurchaseKeys, a: Ask, prefix: string): Promise<PurchaseClaim> =>
    keys.claim(a.intentId, `${prefix}${a.key}`, a.hash, a.legs ? m.purchases.ledgerReadFor(a.legs)!.read : undefined, a.kept ? m.purchases.kept(a.intentId) : undefined);

  /** The claims one after the other, each alone, under keys `a…`; then all in one turn under keys `b…`, counting that turn's statements. */
  async function aloneThenTogether(asks: Ask[]): Promise<{ alone: PurchaseClaim[]; together: PurchaseClaim[]; sent: string[] }> {
    const one: PurchaseClaim[] = [];
    for (const a of asks) one.push(await claim(alone, a, 'a'));
    statements.length = 0;
    const together = await Promise.all(asks.map((a) => claim(m.purchaseKeys, a, 'b')));
    return { alone: one, together, sent: [...statements] };
  }

  const records = async (prefix: string, asks: Ask[]) =>
    (
      await b.db.query<Record<string, unknown>>(
        `SELECT merchant, substr(key, 2) AS key, request_hash, state, intent_id, status, convert_from(body, 'UTF8') AS body, updated_at > now() - interval '30 seconds' AS touched
           FROM idempotency_keys WHERE mode = 'market' AND merchant = ANY($1) AND key LIKE $2 || '%' ORDER BY merchant, key`,
        [asks.map((a) => a.intentId), prefix],
      )
    ).rows;

  it('new keys in one turn are one statement per ledger form: each claimed with its actor row and ledger states as alone', async () => {
    const buys = [await quoted(rich), await quoted(poor), await quoted(none), await quoted(rich)];
    // A leg whose nonce is used already: the ledger read says so, as alone.
    const usedNonce = (buys[3]!.legs.seller as { payload: { authorization: { nonce: string } } }).payload.authorization.nonce;
    await b.db.query(`INSERT INTO usdc_authorizations (authorizer, nonce, recipient, value, tx_hash) VALUES ($1, $2, $3, 1, '0x01')`, [rich.address.toLowerCase(), usedNonce.toLowerCase(), FEE.USDC]);
    const asks: Ask[] = [];
    for (let i = 0; i < 16; i++) asks.push({ ...buys[i % 4]!, key: `k${i}`, hash: `h${i}`, kept: i % 3 === 0 });
    // Claims without a ledger read (an ANM purchase's), and an intent that does not exist.
    for (let i = 0; i < 4; i++) asks.push({ intentId: i === 0 ? 'pi_none' : buys[i]!.intentId, key: `n${i}`, hash: `h${i}`, kept: i === 1 });
    const r = await aloneThenTogether(asks);
    expect(r.sent.filter((s) => s.startsWith(BATCH_SQL))).toHaveLength(2);
    expect(r.sent).toHaveLength(2);
    expect(r.together).toEqual(r.alone);
    for (const [i, c] of r.together.entries()) {
      expect(c.outcome).toBe('claimed');
      if (c.outcome !== 'claimed') continue;
      expect(c.purchase?.row?.version ?? null).toBe(asks[i]!.intentId === 'pi_none' ? null : 1);
      expect(c.ledger?.map((s) => s.used)).toEqual(asks[i]!.legs ? [i % 4 === 3, false] : undefined);
    }
    expect(r.together[1]).toMatchObject({ ledger: [{ balance: 5n }, { balance: 5n }] });
    expect(await records('b', asks)).toEqual(await records('a', asks));
  });

  it('a replay, a key in flight, one reused, one taken over, one expired and a same-key pair in one turn: each answers as alone', async () => {
    const buy = await quoted(rich);
    const ask = (key: string, hash = 'h'): Ask => ({ ...buy, key, hash, kept: true });
    for (const p of ['a', 'b']) {
      await claim(alone, ask('replay'), p);
      await m.purchaseKeys.done(buy.intentId, `${p}replay`, 200, { 'x-a': '1' }, '{"first":true}');
      await claim(alone, ask('flight'), p);
      await claim(alone, ask('reused', 'h0'), p);
      await claim(alone, ask('takeover'), p);
      await claim(alone, ask('expired', 'h0'), p);
    }
    await b.db.query(`UPDATE idempotency_keys SET updated_at = now() - interval '2 minutes' WHERE merchant = $1 AND key LIKE '_takeover'`, [buy.intentId]);
    await b.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE merchant = $1 AND key LIKE '_expired'`, [buy.intentId]);
    const asks = [ask('fresh'), ask('replay'), ask('flight'), ask('reused'), ask('takeover'), ask('expired'), ask('twice'), ask('twice')];
    const r = await aloneThenTogether(asks);
    expect(r.alone.map((c) => c.outcome)).toEqual(['claimed', 'replay', 'in_flight', 'reused', 'claimed', 'claimed', 'claimed', 'in_flight']);
    expect(r.together.slice(0, 6)).toEqual(r.alone.slice(0, 6));
    expect(r.together[1]).toEqual({ outcome: 'replay', status: 200, headers: { 'x-a': '1' }, body: Buffer.from('{"first":true}') });
    // Two requests with one key in one turn: one runs, the other is told it is in flight, as two
    // requests racing alone. The second is sent at once on its own, so it usually is the one that runs.
    expect(r.together.slice(6).sort((x, y) => x.outcome.localeCompare(y.outcome))).toEqual(r.alone.slice(6));
    // One statement for the new keys; the second of the pair alone; the function for every key that exists.
    expect(r.sent.filter((s) => s.startsWith(BATCH_SQL))).toHaveLength(1);
    expect(r.sent.filter((s) => s.startsWith(NEW_KEY_SQL))).toHaveLength(1);
    expect(r.sent.filter((s) => s.startsWith(FUNCTION_SQL))).toHaveLength(5);
    expect(r.sent).toHaveLength(7);
    expect(await records('b', asks)).toEqual(await records('a', asks));
  });

  it.skipIf(name === 'pglite+memory')('a batch of claims commits asynchronously, as a claim alone does', async () => {
    const buy = await quoted(rich);
    const setting = await b.db.tx(async (q) => {
      const sent: string[] = [];
      const keys = new PurchaseKeys({ ...b.db, query: (sql, params) => (sent.push(sql), q.query(sql, params)) });
      const claims = await Promise.all(['s1', 's2', 's3'].map((key) => keys.claim(buy.intentId, key, 'h', m.purchases.ledgerReadFor(buy.legs)!.read)));
      expect(claims.map((c) => c.outcome)).toEqual(['claimed', 'claimed', 'claimed']);
      expect(sent.map((t) => t.startsWith(BATCH_SQL))).toEqual([true]);
      return (await q.query<{ synchronous_commit: string }>(`SHOW synchronous_commit`)).rows[0]?.synchronous_commit;
    });
    expect(setting).toBe('off');
  });

  it.skipIf(name === 'pglite+memory')('two batches over the same keys in opposite orders lock them in one order: each key claimed once, no deadlock', async () => {
    const buy = await quoted(rich);
    const asks = Array.from({ length: 40 }, (_, i): Ask => ({ ...buy, key: `lock${String(i).padStart(2, '0')}`, hash: 'h' }));
    // A claim of a key in the middle, uncommitted, holds both batches at that key: in the order
    // given, each would then hold keys the other waits for.
    let inserted!: () => void;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const blocker = b.db.tx(async (q) => {
      await q.query(`INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state) VALUES ($1, 'market', 'lock20', 'h', 'in_flight')`, [buy.intentId]);
      inserted();
      await held;
    });
    await new Promise<void>((r) => (inserted = r));
    statements.length = 0;
    const both = Promise.all([Promise.all(asks.map((a) => claim(m.purchaseKeys, a, ''))), Promise.all([...asks].reverse().map((a) => claim(other, a, '')))]);
    // Released once both batches wait at the key, however long they take to get there: released
    // earlier, the batches would find it committed and never hold keys the other waits for.
    const waiting = async () => (await b.db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND starts_with(query, $1)`, [BATCH_SQL])).rows.length;
    await waitFor(async () => (await waiting()) >= 2, 20_000, 'both batches waiting for a lock');
    release();
    await blocker;
    const outcomes = (await both).flat().map((c) => c.outcome);
    expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(39);
    expect(outcomes.filter((o) => o === 'in_flight')).toHaveLength(41);
    // A failed batch (a deadlock broken by PostgreSQL) would have been retried one claim at a time.
    expect(statements.filter((s) => s.startsWith(BATCH_SQL))).toHaveLength(2);
    expect(statements.filter((s) => s.startsWith(NEW_KEY_SQL))).toHaveLength(0);
  });
});
