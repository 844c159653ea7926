/**
 * No oversell under load (issue 23 "What must be shown"; DESIGN §7 "Payment links"): a link
 * with 10 units and 200 buyers pressing Pay at once, spread over two service processes on one
 * PostgreSQL and one NATS. Exactly 10 get a hold and go to checkout, the other 190 get the
 * sold-out page; the link's counts and its holds agree; holds released by their timer return
 * their units to the next buyers, and no more.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnetServer, type DevnetServer } from '../../runtime/chain/devnet/server.ts';
import { Merchants } from '../../runtime/merchant/merchants.ts';
import { openReal, realAvailable, waitFor, DATABASE_URL, NATS_URL, type Backend } from '../helpers/backends.ts';
import { ServiceProcess } from '../helpers/service-process.ts';

type Json = Record<string, unknown>;
const UNITS = 10;
const BUYERS = 200;

let b: Backend;
let devnet: DevnetServer;
let dataDir: string;
const procs: ServiceProcess[] = [];
let gateways: string[] = [];
const operatorToken = `opt_${randomBytes(16).toString('hex')}`;

async function call(base: string, method: string, p: string, auth: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(base + p, { method, headers: { authorization: `Bearer ${auth}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
}

async function press(base: string, p: string): Promise<{ status: number; location: string | null }> {
  const res = await fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
  await res.arrayBuffer();
  return { status: res.status, location: res.headers.get('location') };
}

async function holdsOf(linkId: string): Promise<Array<{ id: string; state: string }>> {
  const r = await b.db.query<{ id: string; state: string }>(`SELECT a.id, a.state FROM payment_link_holds h JOIN actors a ON a.id = h.hold_id WHERE h.link_id = $1`, [linkId]);
  return r.rows;
}

describe.skipIf(!realAvailable)('payment link units over two service processes', () => {
  beforeAll(async () => {
    b = await openReal();
    devnet = await startDevnetServer({ port: 0, blockMs: 0 });
    dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-links-'));
    const pepper = randomBytes(24).toString('hex');
    const env = (name: string): Record<string, string> => ({
      ANMPAY_ROLES: 'gateway,runtime',
      DATABASE_URL,
      ANMPAY_DB_SCHEMA: b.schema!,
      DATABASE_POOL_SIZE: '4',
      NATS_URL,
      NATS_NAMESPACE: b.namespace!,
      ANM_TEST_RPC_URL: `${devnet.url}/test`,
      ANM_RPC_URL: `${devnet.url}/live`,
      ANMPAY_KEY_PEPPER: pepper,
      ANMPAY_OPERATOR_TOKEN: operatorToken,
      // Every buyer here comes from 127.0.0.1: the per-IP limit is another test's subject.
      ANMPAY_LINK_PAY_PER_MIN: '100000',
      PORT: '0',
      HOST: '127.0.0.1',
      ANMPAY_DATA_DIR: path.join(dataDir, name),
      LOG_LEVEL: 'info',
    });
    procs.push(ServiceProcess.spawn('a', env('a')), ServiceProcess.spawn('b', env('b')));
    gateways = await Promise.all(procs.map((p) => p.url()));
  }, 90_000);

  afterAll(async () => {
    const codes = await Promise.all(procs.map((p) => p.stop()));
    expect(codes).toEqual([0, 0]);
    await devnet?.close();
    await b?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('10 units, 200 concurrent buyers: exactly 10 holds, 190 sold out; released holds return units, and no more', async () => {
    const m = await call(gateways[0]!, 'POST', '/ops/api/merchants', operatorToken, { name: 'Rush Shop' });
    expect(m.status).toBe(201);
    const merchant = m.json.merchant_id as string;
    const handle = m.json.handle as string;
    await new Merchants(b.db, Buffer.alloc(32)).setPayoutAddress(merchant, 'live', 'anm1payoutrushshop');
    const key = (m.json.keys as { live: { secret: string } }).live.secret;
    const link = await call(gateways[1]!, 'POST', '/api/v1/payment-links', key, { slug: 'drop', title: 'Limited drop', amount: '1', units_total: UNITS });
    expect(link.status).toBe(201);
    const linkId = link.json.id as string;
    const page = `/p/${handle}/drop`;

    const answers = await Promise.all(Array.from({ length: BUYERS }, (_, i) => press(gateways[i % 2]!, page)));
    const byStatus = (s: number) => answers.filter((a) => a.status === s).length;
    expect({ checkout: byStatus(303), soldOut: byStatus(409), total: answers.length }).toEqual({ checkout: UNITS, soldOut: BUYERS - UNITS, total: BUYERS });
    // Both processes sold: the row lock, not one process's memory, kept the count.
    const intents = answers.filter((a) => a.status === 303).map((a) => a.location!.slice(3));
    expect(new Set(intents).size).toBe(UNITS);

    const held = await waitFor(async () => {
      const hs = await holdsOf(linkId);
      return hs.length === UNITS && hs.every((h) => h.state === 'HELD') ? hs : null;
    }, 20_000, '10 holds HELD');
    const after = await call(gateways[0]!, 'GET', `/api/v1/payment-links/${linkId}`, key);
    expect(after.json).toMatchObject({ units_total: UNITS, units_held: UNITS, units_sold: 0, units_left: 0 });

    // Three holds come due: their units return, three more buyers get them, the fourth does not.
    const due = held.slice(0, 3).map((h) => h.id);
    await b.db.query(`UPDATE timers SET fire_at = now() WHERE actor_id = ANY($1) AND name = 'hold'`, [due]);
    await waitFor(async () => (await holdsOf(linkId)).filter((h) => h.state === 'RELEASED').length === 3, 20_000, '3 holds RELEASED');
    await waitFor(async () => (await call(gateways[1]!, 'GET', `/api/v1/payment-links/${linkId}`, key)).json.units_held === UNITS - 3, 10_000, 'units returned');
    const again = await Promise.all(Array.from({ length: 20 }, (_, i) => press(gateways[i % 2]!, page)));
    expect(again.filter((a) => a.status === 303)).toHaveLength(3);
    expect(again.filter((a) => a.status === 409)).toHaveLength(17);
    await waitFor(async () => (await holdsOf(linkId)).filter((h) => h.state === 'HELD').length === UNITS, 20_000, '10 holds HELD again');
  }, 120_000);
});
