/**
 * The takeover cooldown holds across marketplace processes (ADR 0077; ADR 0072 "How often the
 * endpoint is called"; docs/marketplace.md "POST /api/v1/resources"): two instances, each with
 * its own connection pool, bus connection, engine and takeover gate, share one real PostgreSQL.
 * Copies of a registration sent to both at once reach the endpoint once; the instance that did
 * not probe answers 429 rate_limited with Retry-After, and so does either instance for another
 * key within the cooldown; after it the endpoint is probed again. The claim's SQL is also run
 * on PGlite, the embedded default, through two gates over one database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TakeoverProof } from '../../machines/listing/events.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { MarketRefusal } from '../../runtime/market/errors.ts';
import { TakeoverGate } from '../../runtime/market/takeover-gate.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL, backendFactories, openReal, realAvailable, type Backend } from '../helpers/backends.ts';
import { seller, signedListing, type Seller } from '../fixtures/market.ts';
import { startScanMarket, startScanRuntime, stopScanSuite, type ScanMarket, type ScanRuntime } from './scanner-harness.ts';
import { squattedListing, startTakeoverSeller, type TakeoverSeller } from './takeover-seller.ts';

const COOLDOWN_MS = 8_000;
const COPIES = 12;
/** The gates' own cooldown in the claim tests below: short, so a test can wait it out. */
const GATE_COOLDOWN_MS = 1_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const answer = (r: { status: number; json: unknown }) => `${r.status} ${(r.json as { error?: { code?: string } }).error?.code ?? 'none'}`;

describe.runIf(realAvailable)('takeover cooldown across two marketplace instances on one PostgreSQL (ADR 0077)', () => {
  let backend: Backend;
  let db2: Db;
  let bus2: NatsBus;
  let rt1: ScanRuntime;
  let rt2: ScanRuntime;
  let m1: ScanMarket;
  let m2: ScanMarket;
  let endpoints: TakeoverSeller;

  beforeAll(async () => {
    backend = await openReal();
    // The second instance joins the first one's schema and bus namespace with connections of its own.
    db2 = await openDb({ databaseUrl: DATABASE_URL, schema: backend.schema });
    bus2 = await NatsBus.connect({ url: NATS_URL, namespace: backend.namespace! });
    rt1 = await startScanRuntime(backend.db, backend.bus, { intervalMs: 3_600_000 });
    rt2 = await startScanRuntime(db2, bus2, { intervalMs: 3_600_000 });
    m1 = await startScanMarket(rt1, backend.db, { takeoverCooldownMs: COOLDOWN_MS });
    m2 = await startScanMarket(rt2, db2, { takeoverCooldownMs: COOLDOWN_MS });
    endpoints = await startTakeoverSeller();
  }, 60_000);

  afterAll(async () => {
    await stopScanSuite({ rt: rt2, m: m2 });
    await bus2?.close();
    await db2?.close();
    await stopScanSuite({ rt: rt1, m: m1, server: endpoints?.server, backend });
  });

  const body = (s: Seller, path: string, name: string) => signedListing(s, { name, endpoint: `${endpoints.base}/${path}`, price: '0.02' });

  it.each([
    { title: 'an endpoint answering 404', path: 'gone', proven: false, probed: '403 forbidden' },
    // A copy reaching the probing instance after its takeover finds the listing its own: 200 as well.
    { title: 'an endpoint whose 402 names the key', path: 'mine', proven: true, probed: '200 none' },
  ])('$title: copies sent to both instances probe once; the other instance answers 429; after the cooldown a probe again', async (c) => {
    const listing = await squattedListing(m1, endpoints.base, c.path);
    const key = seller();
    if (c.proven) endpoints.payees[c.path] = [key.evm.address];
    const signed = await body(key, c.path, `Tide table ${c.path} by its owner`);
    const before = endpoints.hits[c.path] ?? 0;

    // The probe's answer is held until the instance that does not probe has refused a copy (or,
    // should both probe, until the seller has seen two probes), so copies reach that instance
    // while the probe is in flight however slow the machine is. While it is held only that
    // instance can refuse (the prober's copies share its probe), so the first refusal names it:
    // both may answer 200 too, once the other's late copies find the listing the key's.
    let release!: () => void;
    let refuser: number | undefined;
    endpoints.holds[c.path] = new Promise<void>((r) => (release = r));
    const watch = setInterval(() => endpoints.hits[c.path]! - before > 1 && release(), 20);
    const sent = Date.now();
    const copies = await Promise.all(
      Array.from({ length: COPIES }, (_, i) =>
        (i % 2 ? m2 : m1).req('POST', '/api/v1/resources', { body: signed }).then((r) => {
          if (answer(r) === '429 rate_limited') {
            refuser ??= i % 2;
            release();
          }
          return r;
        }),
      ),
    ).finally(() => (clearInterval(watch), delete endpoints.holds[c.path]));
    expect(Date.now() - sent).toBeLessThan(COOLDOWN_MS);
    // Per process, each instance would have probed once: twice in all.
    expect(endpoints.hits[c.path]! - before).toBe(1);
    const by = [0, 1].map((k) => copies.filter((_, i) => i % 2 === k).map(answer));
    // The other instance answered 429 at least once: it is the refuser.
    expect(refuser).toBeDefined();
    expect(by[1 - refuser!]).toContain(c.probed);
    // The instance that did not probe refused every copy it got before the takeover (a proven one after it finds the listing the key's).
    expect(by[refuser!]!.filter((a) => a !== '429 rate_limited' && !(c.proven && a === c.probed))).toEqual([]);
    const takeovers = await backend.db.query(`SELECT 1 FROM actor_events WHERE actor_id = $1 AND event->>'type' = 'listing.take_over'`, [listing.resource_id]);
    expect(takeovers.rows).toHaveLength(c.proven ? 1 : 0);

    // Another key on each instance within the cooldown: 429 with Retry-After, no request.
    for (const m of [m1, m2]) {
      const res = await m.req('POST', '/api/v1/resources', { body: await body(seller(), c.path, `Tide table ${c.path} again`) });
      const err = (res.json as { error: { code: string; retryAfter: number } }).error;
      expect({ status: res.status, code: err.code, header: Number(res.headers['retry-after']) }).toEqual({ status: 429, code: 'rate_limited', header: err.retryAfter });
      expect(err.retryAfter).toBeGreaterThanOrEqual(1);
      expect(err.retryAfter).toBeLessThanOrEqual(Math.ceil(COOLDOWN_MS / 1000));
    }
    expect(endpoints.hits[c.path]! - before).toBe(1);

    await sleep(COOLDOWN_MS + 100);
    const later = await m2.req('POST', '/api/v1/resources', { body: await body(seller(), c.path, `Tide table ${c.path} later`) });
    expect(later.status).toBe(403);
    expect(endpoints.hits[c.path]! - before).toBe(2);
  });
});

describe.each(backendFactories)('takeover cooldown claim on %s: two gates over one database', (_name, open) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await open();
  }, 60_000);
  afterAll(() => backend?.close());

  const proof: TakeoverProof = { probed_at: 0, outcome: 'ok', http_status: 402, latency_ms: 1, detail: '', payees: [] };
  /**
   * The Retry-After a refusal may carry: the rest of a 1.5 s cooldown that began after `since`,
   * in whole seconds rounded up: 2 while under half a second has passed, 1 or 2 on a machine slow
   * enough that more has (a refusal told a constant 1 s still fails whenever the machine is quick).
   */
  const restOfCooldown = (since: number): number[] => {
    const least = Math.max(1, Math.ceil((GATE_COOLDOWN_MS - (Date.now() - since)) / 1_000));
    return least === 2 ? [2] : [1, 2];
  };

  it('the first claims the probe, the second is refused with what is left of the cooldown, then claims it once it ended', async () => {
    const [a, b] = [new TakeoverGate(backend.db, GATE_COOLDOWN_MS), new TakeoverGate(backend.db, GATE_COOLDOWN_MS)];
    let probes = 0;
    const probe = async () => (probes++, proof);
    const since = Date.now();
    await a.run('res_aa', 'terms-a', probe, async () => 'a');
    const refused = await b.run('res_aa', 'terms-b', probe, async () => 'b').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MarketRefusal);
    expect((refused as MarketRefusal).code).toBe('rate_limited');
    expect(restOfCooldown(since)).toContain((refused as MarketRefusal).retryAfter);
    // Another listing is not held by this one's cooldown.
    expect(await b.run('res_bb', 'terms-b', probe, async () => 'b')).toBe('b');
    expect(probes).toBe(2);
    await sleep(GATE_COOLDOWN_MS + 100);
    expect(await b.run('res_aa', 'terms-b', probe, async () => 'b')).toBe('b');
    expect(probes).toBe(3);
  });

  // ADR 0077 "Shared cooldown": a refused claim's Retry-After is the rest of the cooldown.
  it('claims of an expired row made at once by many gates: one probes, every other is told the whole cooldown, not 1 s', async () => {
    for (const id of ['res_dd0', 'res_dd1', 'res_dd2']) {
      await backend.db.query(`INSERT INTO listing_takeover_probes (resource_id, probed_at) VALUES ($1, now() - interval '1 hour')`, [id]);
      const gates = Array.from({ length: 8 }, () => new TakeoverGate(backend.db, 60_000));
      let probes = 0;
      const results = await Promise.allSettled(gates.map((g, i) => g.run(id, `terms-${i}`, async () => (probes++, proof), async () => i)));
      expect(probes).toBe(1);
      const refused = results.filter((r) => r.status === 'rejected').map((r) => (r.reason as MarketRefusal));
      expect(refused.map((r) => `${r.code} ${r.retryAfter}`)).toEqual(Array(7).fill('rate_limited 60'));
    }
  });

  it('a gate refuses what it knows is cooling without asking the database; once that has passed, the claim decides again', async () => {
    let queries = 0;
    const counted: Queryable = { query: (sql, params) => (queries++, backend.db.query(sql, params)), exec: (sql) => backend.db.exec(sql) };
    const [a, b] = [new TakeoverGate(counted, GATE_COOLDOWN_MS), new TakeoverGate(counted, GATE_COOLDOWN_MS)];
    let probes = 0;
    const probe = async () => (probes++, proof);
    const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => `${(e as MarketRefusal).code} ${(e as MarketRefusal).retryAfter}`);
    const cooling = (since: number) => restOfCooldown(since).map((n) => `rate_limited ${n}`);
    const since = Date.now();
    await a.run('res_ee', 'terms-a', probe, async () => 'a');
    // `a` probed, `b` learns the cooldown from the database once; then neither asks it again.
    expect(cooling(since)).toContain(await refusal(b.run('res_ee', 'terms-b', probe, async () => 'b')));
    const asked = queries;
    for (const g of [a, b, a, b]) expect(cooling(since)).toContain(await refusal(g.run('res_ee', 'terms-c', probe, async () => 'c')));
    expect(queries).toBe(asked);
    await sleep(GATE_COOLDOWN_MS + 100);
    // Over for both: `a` claims again; `b`, whose memory says it is over too, is refused by the database.
    const again = Date.now();
    expect(await a.run('res_ee', 'terms-a2', probe, async () => 'a')).toBe('a');
    const before = queries;
    expect(cooling(again)).toContain(await refusal(b.run('res_ee', 'terms-b2', probe, async () => 'b')));
    expect(queries).toBeGreaterThan(before);
    expect(probes).toBe(2);
  });

  it('claims made at once by many gates: one probes', async () => {
    const gates = Array.from({ length: 8 }, () => new TakeoverGate(backend.db, 60_000));
    let probes = 0;
    const results = await Promise.allSettled(gates.map((g, i) => g.run('res_cc', `terms-${i}`, async () => (probes++, proof), async () => i)));
    expect(probes).toBe(1);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => ((r).reason as MarketRefusal).code)).toEqual(Array(7).fill('rate_limited'));
  });
});
