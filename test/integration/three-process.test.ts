/**
 * DESIGN §6 "Scale-out": processes with different ANMPAY_ROLES over one PostgreSQL and one
 * NATS (own schema and namespace), as docs/deploy.md lays them out:
 *
 *   gw  = gateway                    (merchant API)
 *   all = gateway,runtime,indexer    (merchant API, consumers, timers, webhooks, chain follower)
 *   rt  = runtime                    (consumers, timers, webhooks), killed with SIGKILL mid-load
 *
 * The devnet is this test's own process (what `anmpay devnet serve` runs), reached through
 * ANM_TEST_RPC_URL / ANM_RPC_URL; webhooks go to a local receiver. Creates, payments and
 * cancels go through both gateways; at the end every intent is in its expected state, every
 * webhook fact reached the receiver under one event id (spec: at-least-once, same
 * `Service-Event-Id` on every retry), the balances hold each payment once, and the rate limits
 * and idempotency keys are shared by the two gateways (spec "Idempotency" rule 1, "Limits").
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { startDevnetServer, type DevnetServer } from '../../runtime/chain/devnet/server.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { openReal, realAvailable, waitFor, DATABASE_URL, NATS_URL, type Backend } from '../helpers/backends.ts';
import { payIntent } from '../helpers/chain-harness.ts';
import { ServiceProcess } from '../helpers/service-process.ts';
import { Receiver } from '../webhooks/receiver.ts';

type Json = Record<string, unknown>;
const BURST = 40;
const MERCHANTS = 3;
const PER_MERCHANT = 12;
const CANCEL_EVERY = 6;

let b: Backend;
let devnet: DevnetServer;
let rpc: AnmRpcClient;
let receiver: Receiver;
let dataDir: string;
const procs: Record<'gw' | 'all' | 'rt', ServiceProcess> = {} as never;
let gateways: string[] = [];
const operatorToken = `opt_${randomBytes(16).toString('hex')}`;

async function call(base: string, method: string, p: string, auth: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string; json: Json }> {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Json) : {} };
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T, R>(items: T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

describe.skipIf(!realAvailable)('three processes with different roles over one PostgreSQL and NATS', () => {
  beforeAll(async () => {
    b = await openReal();
    devnet = await startDevnetServer({ port: 0, blockMs: 200 });
    rpc = new AnmRpcClient(`${devnet.url}/test`);
    receiver = await Receiver.start();
    dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-3p-'));
    // Every gateway hashes keys with the same pepper.
    const pepper = randomBytes(24).toString('hex');
    const env = (roles: string): Record<string, string> => ({
      ANMPAY_ROLES: roles,
      DATABASE_URL,
      ANMPAY_DB_SCHEMA: b.schema!,
      DATABASE_POOL_SIZE: '4',
      NATS_URL,
      NATS_NAMESPACE: b.namespace!,
      ANM_TEST_RPC_URL: `${devnet.url}/test`,
      ANM_RPC_URL: `${devnet.url}/live`,
      ANMPAY_KEY_PEPPER: pepper,
      ANMPAY_OPERATOR_TOKEN: operatorToken,
      ANMPAY_ALLOW_PRIVATE_WEBHOOKS: '1',
      // A killed process's unacked messages and claimed deliveries come back within seconds.
      NATS_ACK_WAIT_MS: '3000',
      ANMPAY_WEBHOOK_LEASE_MS: '11000',
      RATE_LIMIT_KEY_BURST: String(BURST),
      RATE_LIMIT_KEY_PER_MIN: String(BURST),
      RATE_LIMIT_IP_BURST: '100000',
      RATE_LIMIT_IP_PER_MIN: '100000',
      PORT: '0',
      HOST: '127.0.0.1',
      ANMPAY_DATA_DIR: path.join(dataDir, roles),
      LOG_LEVEL: 'info',
    });
    const start = (name: 'gw' | 'all' | 'rt', roles: string) => (procs[name] = ServiceProcess.spawn(name, env(roles)));
    start('gw', 'gateway');
    start('all', 'gateway,runtime,indexer');
    start('rt', 'runtime');
    gateways = await Promise.all([procs.gw.url(), procs.all.url()]);
    await procs.rt.waitForLog(/^started$/);
    expect(procs.rt.stdout).not.toMatch(/merchant API listening/);
  }, 90_000);

  afterAll(async () => {
    // The survivors drain and exit cleanly on SIGTERM, whatever their roles.
    const codes = await Promise.all([procs.gw?.stop(), procs.all?.stop(), procs.rt?.stop('SIGKILL')]);
    expect(codes.slice(0, 2)).toEqual([0, 0]);
    await receiver?.close();
    await devnet?.close();
    await b?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('creates, payments and webhooks through both gateways; a runtime killed mid-load loses and doubles nothing', async () => {
    const merchants = await pool(Array.from({ length: MERCHANTS }, (_, i) => i), MERCHANTS, async (i) => {
      const m = await call(gateways[i % 2]!, 'POST', '/ops/api/merchants', operatorToken, { name: `Scale ${i}` });
      expect(m.status).toBe(201);
      const id = m.json.merchant_id as string;
      const hook = await call(gateways[(i + 1) % 2]!, 'POST', `/ops/api/merchants/${id}/webhooks`, operatorToken, { mode: 'test', url: `http://127.0.0.1:${receiver.port}/hooks/${id}` });
      expect(hook.status).toBe(201);
      return { id, key: (m.json.keys as { test: { secret: string } }).test.secret };
    });

    const orders = merchants.flatMap((m, mi) => Array.from({ length: PER_MERCHANT }, (_, i) => ({ m, n: mi * PER_MERCHANT + i })));
    const intents = await pool(orders, 6, async ({ m, n }) => {
      const r = await call(gateways[n % 2]!, 'POST', '/api/v1/payment-intents', m.key, { amount: '1.5', metadata: { order: `o${n}` } }, { 'idempotency-key': `order-${n}` });
      expect(r.status, r.text).toBe(201);
      return { m, n, id: r.json.id as string, merchantAmount: BigInt(r.json.merchant_amount as string), cancel: n % CANCEL_EVERY === CANCEL_EVERY - 1 };
    });

    // Pay (and cancel) while the runtime processes work; SIGKILL one of them half-way.
    let killedAt = 0;
    let confirmedAtKill = -1;
    const txs = new Map<string, string>();
    await pool(intents, 6, async (it, i) => {
      if (i === Math.floor(intents.length / 2)) {
        procs.rt.child.kill('SIGKILL');
        killedAt = Date.now();
        confirmedAtKill = receiver.received.filter((r) => r.body.type === 'payment.confirmed').length;
      }
      if (it.cancel) {
        const r = await call(gateways[i % 2]!, 'POST', `/api/v1/payment-intents/${it.id}/cancel`, it.m.key);
        expect(r.status, r.text).toBe(200);
        return;
      }
      const payer = generateWallet('test');
      await rpc.faucet(payer.address, 10_000_000_000n);
      txs.set(it.id, await payIntent(b.db, rpc, it.id, payer));
    });
    expect(await procs.rt.exited).toBeNull();
    expect(killedAt).toBeGreaterThan(0);

    const paid = intents.filter((x) => !x.cancel);
    const canceled = intents.filter((x) => x.cancel);
    // The kill came while payments were still to settle: the rest was done without that process.
    expect(confirmedAtKill).toBeGreaterThanOrEqual(0);
    expect(confirmedAtKill).toBeLessThan(paid.length);
    const facts = (type: string) => new Set(receiver.received.filter((r) => r.body.type === type).map((r) => (r.body.data as { id: string }).id));
    await waitFor(async () => facts('payment.confirmed').size === paid.length && facts('payment.expired').size === canceled.length, 60_000, 'every confirmed and canceled webhook');
    // Every delivery the store holds has been sent, none is left pending (the killed process's claims came back).
    await waitFor(async () => {
      const { rows } = await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded'`);
      return rows[0]!.n === 0;
    }, 30_000, 'no pending delivery');

    // Each intent in its expected state, paid by the transaction sent for it (read through both gateways).
    for (const [mi, m] of merchants.entries()) {
      const list = await call(gateways[mi % 2]!, 'GET', '/api/v1/payment-intents?limit=100', m.key);
      expect(list.status).toBe(200);
      const byId = new Map((list.json.data as Json[]).map((x) => [x.id as string, x]));
      const mine = intents.filter((x) => x.m.id === m.id);
      expect(byId.size).toBe(mine.length);
      for (const x of mine) {
        const view = byId.get(x.id)!;
        if (x.cancel) expect(view.status).toBe('EXPIRED');
        else {
          expect(view.status).toBe('PAID');
          expect(view.transaction_hash).toBe(txs.get(x.id));
        }
      }
      // Each payment counted once in the balance.
      const bal = await call(gateways[(mi + 1) % 2]!, 'GET', '/api/v1/balance', m.key);
      const expected = mine.filter((x) => !x.cancel).reduce((s, x) => s + x.merchantAmount, 0n);
      expect(bal.json.settled).toBe(expected.toString());
    }

    // Webhooks: every fact in the store delivered; one event id per (intent, type); a retried
    // delivery (allowed: at-least-once) carries the same bytes.
    const { rows: stored } = await b.db.query<{ event_id: string }>(`SELECT event_id FROM webhook_deliveries`);
    const deliveredIds = new Set(receiver.received.map((r) => r.eventId));
    expect(new Set(stored.map((r) => r.event_id))).toEqual(deliveredIds);
    const idsPerFact = new Map<string, Set<string>>();
    const bodyPerId = new Map<string, string>();
    for (const r of receiver.received) {
      const key = `${(r.body.data as { id: string }).id}:${r.body.type}`;
      idsPerFact.set(key, (idsPerFact.get(key) ?? new Set()).add(r.eventId));
      const raw = r.rawBody.toString('utf8');
      expect(bodyPerId.get(r.eventId) ?? raw).toBe(raw);
      bodyPerId.set(r.eventId, raw);
    }
    for (const [fact, ids] of idsPerFact) expect(ids.size, fact).toBe(1);
    for (const x of intents) {
      expect(idsPerFact.has(`${x.id}:payment.created`), x.id).toBe(true);
      expect(idsPerFact.has(`${x.id}:${x.cancel ? 'payment.expired' : 'payment.confirmed'}`), x.id).toBe(true);
    }
    // The journal took each event once.
    const { rows: doubled } = await b.db.query(`SELECT actor_id, event_id FROM actor_events GROUP BY actor_id, event_id HAVING count(*) > 1`);
    expect(doubled).toEqual([]);
  }, 90_000);

  it('an idempotency key is one create across both gateways', async () => {
    const m = await call(gateways[0]!, 'POST', '/ops/api/merchants', operatorToken, { name: 'Idem' });
    const key = (m.json.keys as { test: { secret: string } }).test.secret;
    const body = { amount: '2', metadata: { order: 'idem' } };
    const first = await call(gateways[0]!, 'POST', '/api/v1/payment-intents', key, body, { 'idempotency-key': 'k1' });
    expect(first.status).toBe(201);
    const replay = await call(gateways[1]!, 'POST', '/api/v1/payment-intents', key, body, { 'idempotency-key': 'k1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replay')).toBe('true');
    expect(replay.text).toBe(first.text);
    const reused = await call(gateways[1]!, 'POST', '/api/v1/payment-intents', key, { ...body, amount: '3' }, { 'idempotency-key': 'k1' });
    expect(reused.status).toBe(409);
    expect((reused.json.error as Json).code).toBe('idempotency_key_reused');
    // The same key at once on both: one create; the other replays it or is told to retry.
    const both = await Promise.all(gateways.map((g) => call(g, 'POST', '/api/v1/payment-intents', key, body, { 'idempotency-key': 'k2' })));
    expect(both.map((r) => r.status).sort()).toEqual(both.some((r) => r.status === 429) ? [201, 429] : [200, 201]);
    const ids = new Set(both.filter((r) => r.status < 300).map((r) => r.json.id));
    expect(ids.size).toBe(1);
    const { rows } = await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors WHERE merchant = $1 AND kind = 'payment_intent'`, [m.json.merchant_id as string]);
    expect(rows[0]!.n).toBe(2);
  }, 30_000);

  it("a key's rate limit is one bucket across both gateways", async () => {
    const m = await call(gateways[1]!, 'POST', '/ops/api/merchants', operatorToken, { name: 'Limits' });
    const key = (m.json.keys as { test: { secret: string } }).test.secret;
    const started = Date.now();
    const statuses = await pool(Array.from({ length: 2 * BURST }, (_, i) => i), 4, async (i) => (await call(gateways[i % 2]!, 'GET', '/api/v1/balance', key)).status);
    const minutes = (Date.now() - started) / 60_000;
    const ok = statuses.filter((s) => s === 200).length;
    // Per-process buckets would let all 2 x BURST through; one shared bucket lets at most BURST plus its refill.
    expect(ok).toBeLessThanOrEqual(BURST + Math.ceil(BURST * minutes));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
  }, 30_000);
});
