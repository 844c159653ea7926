/**
 * The Pay limit holds across gateway processes (DESIGN §7 "Payment links": 10 presses a minute
 * per IP and link; ADR 0048): a second gateway on the same PostgreSQL counts the same presses,
 * so a buyer alternating between the two still gets 10, not 20. The sweep of stale buckets
 * (ADR 0054) deletes only buckets that have refilled, so the limit holds across it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import { startHttp } from '../../gateway/server.ts';
import { openCommerceServices } from '../../runtime/commerce/index.ts';
import { openDashboardServices } from '../../runtime/dashboard/index.ts';
import { gateLimits, openMerchantServices } from '../../runtime/merchant/index.ts';
import { gatewayBucketKinds, RateBuckets, type BucketKind } from '../../runtime/merchant/rate-buckets.ts';
import { DATABASE_URL, NATS_URL, realAvailable, waitFor } from '../helpers/backends.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { startLinkHarness, type LinkHarness } from './harness.ts';

let t: LinkHarness;
let second: Services;
let dir: string;

describe.skipIf(!realAvailable)('Pay limit shared by two gateways on one database', () => {
  beforeAll(async () => {
    t = await startLinkHarness();
    const c = t.h.services.config;
    dir = await mkdtemp(path.join(tmpdir(), 'anm-pay-limit-'));
    const devnet = t.h.services.devnet!.url;
    second = await startServices(
      inProcessConfig(dir, t.h.operatorToken, {
        ANMPAY_ROLES: 'gateway',
        DATABASE_URL,
        NATS_URL,
        ANMPAY_DB_SCHEMA: c.ANMPAY_DB_SCHEMA!,
        NATS_NAMESPACE: c.NATS_NAMESPACE!,
        ANMPAY_KEY_PEPPER: c.ANMPAY_KEY_PEPPER!,
        ANM_TEST_RPC_URL: `${devnet}/test`,
        ANM_RPC_URL: `${devnet}/live`,
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await second?.stop();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('presses alternating between the gateways share one bucket: 10 go to checkout, then both answer 429', async () => {
    expect((await t.api('POST', '/api/v1/payment-links', t.merchant.keys.live.secret, { slug: 'shared', title: 'Shared', amount: '1' })).status).toBe(201);
    const p = `/p/${t.merchant.handle}/shared`;
    const press = async (base: string) => {
      const r = await fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
      await r.arrayBuffer();
      return { status: r.status, retryAfter: r.headers.get('retry-after') };
    };
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await press(i % 2 ? second.http!.url : t.h.svc)).status);
    expect(statuses).toEqual(Array<number>(10).fill(303));
    for (const base of [t.h.svc, second.http!.url]) {
      const r = await press(base);
      expect(r.status).toBe(429);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });

  it('the sweep deletes refilled IP and Pay buckets with their run-out leases, keeps current and key buckets, and the limit holds across it', async () => {
    expect((await t.api('POST', '/api/v1/payment-links', t.merchant.keys.live.secret, { slug: 'swept', title: 'Swept', amount: '1' })).status).toBe(201);
    const p = `/p/${t.merchant.handle}/swept`;
    for (let i = 0; i < 10; i++) expect((await t.pay(p)).status).toBe(303);
    expect((await t.pay(p)).status).toBe(429);
    const db = t.h.services.db;
    // Defaults: an IP bucket refills in 60 s (300 at 300/min), a Pay bucket in 60 s (10 at 10/min).
    await db.query(
      `INSERT INTO rate_buckets (bucket, tokens, taken, updated_at) VALUES
         ('ip:203.0.113.1', 0, true, now() - interval '61 seconds'),
         ('pay:plink_gone 203.0.113.1', 0, true, now() - interval '61 seconds'),
         ('ip:203.0.113.2', 0, true, now() - interval '50 seconds'),
         ('pay:plink_kept 203.0.113.2', 0, true, now() - interval '50 seconds'),
         ('key:key_idle', 0, true, now() - interval '1 day')`,
    );
    await db.query(
      `INSERT INTO rate_leases (bucket, lease, holder, leased, expires_at) VALUES
         ('ip:203.0.113.1', 'run-out', 'h1', 5, now() - interval '30 seconds'),
         ('ip:203.0.113.2', 'live', 'h1', 5, now() + interval '30 seconds')`,
    );
    const buyer = `SELECT tokens, updated_at FROM rate_buckets WHERE bucket = 'pay:' || (SELECT id FROM payment_links WHERE slug = 'swept') || ' 127.0.0.1'`;
    const buyerBefore = (await db.query<{ tokens: number; updated_at: Date }>(buyer)).rows;
    expect(buyerBefore).toHaveLength(1);
    const before = await db.query<{ bucket: string }>(`SELECT bucket FROM rate_buckets ORDER BY bucket`);
    expect(before.rows.length).toBeGreaterThan(6);
    const kinds = gatewayBucketKinds(gateLimits(t.h.services.config), t.h.services.config.ANMPAY_LINK_PAY_PER_MIN);
    // Batches of two: the walk crosses several statements.
    expect(await new RateBuckets(db, { batch: 2 }).sweep(kinds)).toBe(2);
    const after = (await db.query<{ bucket: string }>(`SELECT bucket FROM rate_buckets ORDER BY bucket`)).rows.map((r) => r.bucket);
    expect(after).toEqual(before.rows.map((r) => r.bucket).filter((b) => b !== 'ip:203.0.113.1' && b !== 'pay:plink_gone 203.0.113.1'));
    expect(after).toContain('key:key_idle');
    // The buyer's bucket is untouched by the sweep: same tokens, same time.
    expect((await db.query(buyer)).rows).toEqual(buyerBefore);
    const leases = await db.query<{ lease: string }>(`SELECT lease FROM rate_leases WHERE bucket LIKE 'ip:203.0.113.%' ORDER BY lease`);
    expect(leases.rows.map((r) => r.lease)).toEqual(['live']);
    // The buyer's bucket was pressed a moment ago: still empty, on both gateways.
    expect((await t.pay(p)).status).toBe(429);
    const r = await fetch(`${second.http!.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
    await r.arrayBuffer();
    expect(r.status).toBe(429);
  });

  it('a gateway process sweeps on its timer with its own limits, and stops sweeping once closed', async () => {
    const db = t.h.services.db;
    const config = t.h.services.config;
    const merchant = await openMerchantServices(db, config, { demo: false });
    const calls: BucketKind[][] = [];
    const real = merchant.rateBuckets;
    // The process's own sweep, counted: what it is given and how often it runs.
    const rateBuckets = Object.assign(Object.create(real) as RateBuckets, {
      sweep: (kinds: readonly BucketKind[]) => {
        calls.push([...kinds]);
        return real.sweep(kinds);
      },
    });
    await db.query(`INSERT INTO rate_buckets (bucket, tokens, taken, updated_at) VALUES ('ip:203.0.113.77', 0, true, now() - interval '61 seconds')`);
    const edge = await startHttp(
      { ...merchant, rateBuckets, commerce: openCommerceServices(db, { payPerIpPerMinute: config.ANMPAY_LINK_PAY_PER_MIN }), host: t.h.services.engine.host, dbHealthy: async () => true, logger: false },
      { host: '127.0.0.1', port: 0, sweepMs: 150 },
    );
    const started = Date.now();
    try {
      expect(calls).toHaveLength(0);
      await waitFor(async () => calls.length >= 3, 10_000, 'three sweeps');
      // Three periods at least: the timer, not a sweep at start or per request.
      expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 150 - 20);
      expect(calls[0]).toEqual(gatewayBucketKinds(gateLimits(config), config.ANMPAY_LINK_PAY_PER_MIN));
      expect((await db.query(`SELECT 1 FROM rate_buckets WHERE bucket = 'ip:203.0.113.77'`)).rows).toHaveLength(0);
    } finally {
      await edge.close();
    }
    const after = calls.length;
    await new Promise((r) => setTimeout(r, 600));
    expect(calls.length).toBe(after);
  });

  it('with no period given, every sweep runs each 10 minutes (ADR 0054), none sooner, and none once closed', async () => {
    const db = t.h.services.db;
    const config = t.h.services.config;
    const merchant = await openMerchantServices(db, config, { demo: false });
    const dashboard = openDashboardServices(db);
    const calls: string[] = [];
    // Each sweep counted in place of run: the timer is what this test checks.
    const counted = <T extends object>(real: T, name: string): T => Object.assign(Object.create(real) as T, { sweep: () => (calls.push(name), Promise.resolve(0)) });
    const deps = {
      ...merchant,
      idempotency: counted(merchant.idempotency, 'idempotency'),
      rateBuckets: counted(merchant.rateBuckets, 'rate buckets'),
      dashboard: { ...dashboard, sessions: counted(dashboard.sessions, 'sessions') },
      host: t.h.services.engine.host,
      dbHealthy: async () => true,
      logger: false as const,
    };
    const MINUTES_10 = 10 * 60 * 1000;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const edge = await startHttp(deps, { host: '127.0.0.1', port: 0 });
      const steps: Array<[string, number, number]> = [
        ['just before the period', MINUTES_10 - 1, 0],
        ['at the period', 1, 3],
        ['a second period', MINUTES_10, 6],
      ];
      for (const [when, advance, total] of steps) {
        vi.advanceTimersByTime(advance);
        expect(calls, when).toHaveLength(total);
      }
      expect(new Set(calls)).toEqual(new Set(['idempotency', 'rate buckets', 'sessions']));
      await edge.close();
      vi.advanceTimersByTime(3 * MINUTES_10);
      expect(calls).toHaveLength(6);
    } finally {
      vi.useRealTimers();
    }
  });
});
