/**
 * The Pay limit holds across gateway processes (DESIGN §7 "Payment links": 10 presses a minute
 * per IP and link; ADR 0048): a second gateway on the same PostgreSQL counts the same presses,
 * so a buyer alternating between the two still gets 10, not 20.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import { DATABASE_URL, NATS_URL, realAvailable } from '../helpers/backends.ts';
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
});
