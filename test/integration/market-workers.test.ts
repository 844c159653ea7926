/**
 * MARKET_WORKERS (ADR 0051): `npm start` with the marketplace in two worker processes on one
 * port, over real PostgreSQL and NATS. A listing registered through one worker is found
 * through the other once its index catches up; a quote made by one is bought through the
 * other; a worker killed is replaced while the port keeps serving; SIGTERM stops them all.
 * Without PostgreSQL the setting is refused in one line.
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRoles, StartupError } from '../../bin/startup.ts';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { seller, signedListing, signLeg } from '../fixtures/market.ts';
import { openReal, realAvailable, waitFor, DATABASE_URL, NATS_URL, type Backend } from '../helpers/backends.ts';
import { ServiceProcess } from '../helpers/service-process.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed response bodies
type Legs = { seller: { payTo: string; amount: string }; fee: { payTo: string; amount: string } };
type Quote = { intent_id: string; payment_requirements: { accepts: Array<{ extra: { legs: Legs } }> } };

const FEE_USDC = '0x000000000000000000000000000000000000fee5';

/** One kept-alive connection: the primary hands a connection to one worker, so its requests all reach that worker. */
class Connection {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  constructor(private readonly base: string) {}
  request(method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json; headers: http.IncomingHttpHeaders }> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.base}${p}`, { method, agent: this.agent, headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as Json) : {}, headers: res.headers }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }
  close(): void {
    this.agent.destroy();
  }
}

const pidsIn = (stdout: string): Map<number, number> => {
  const pids = new Map<number, number>();
  for (const m of stdout.matchAll(/market worker (\d+) \(pid (\d+)\) serving/g)) pids.set(Number(m[1]), Number(m[2]));
  return pids;
};
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('MARKET_WORKERS is validated and needs the real database', () => {
  it('defaults to 1, takes 1..64, and above 1 refuses the embedded database and bus in one line', () => {
    expect(loadConfig({}).MARKET_WORKERS).toBe(1);
    expect(loadConfig({ MARKET_WORKERS: '2' }).MARKET_WORKERS).toBe(2);
    for (const bad of ['0', '-1', '1.5', 'two', '65']) expect(() => loadConfig({ MARKET_WORKERS: bad })).toThrow(ConfigError);
    expect(() => checkRoles(loadConfig({ MARKET_WORKERS: '2' }))).toThrow(StartupError);
    expect(() => checkRoles(loadConfig({ MARKET_WORKERS: '2' }))).toThrow(
      /^MARKET_WORKERS=2 runs the marketplace in 2 processes, which the embedded database cannot serve \(it belongs to one process\): set DATABASE_URL, NATS_URL, or MARKET_WORKERS=1 \(docs\/deploy\.md\)$/,
    );
    expect(() => checkRoles(loadConfig({ MARKET_WORKERS: '2', DATABASE_URL: 'postgres://x@127.0.0.1/db' }))).toThrow(/: set NATS_URL, or/);
    expect(() => checkRoles(loadConfig({ MARKET_WORKERS: '2', DATABASE_URL: 'postgres://x@127.0.0.1/db', NATS_URL: 'nats://127.0.0.1:4222' }))).not.toThrow();
    // Not running the marketplace, a process has no workers to start.
    expect(() => checkRoles(loadConfig({ MARKET_WORKERS: '2', ANMPAY_ROLES: 'gateway,runtime,indexer' }))).not.toThrow();
  });

  it('npm start with MARKET_WORKERS=2 on the embedded database exits 1 with that line, nothing started', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'anmpay-workers-'));
    try {
      const p = ServiceProcess.spawn('embedded', { ANMPAY_DATA_DIR: dir, MARKET_WORKERS: '2', PORT: '0', MARKETPLACE_PORT: '0', DEVNET_PORT: '0', DEMO_SELLER_PORT: '0' });
      expect(await p.exited).toBe(1);
      expect(p.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^anmpay: MARKET_WORKERS=2 runs the marketplace in 2 processes, .*: set DATABASE_URL, NATS_URL, or MARKET_WORKERS=1/)]);
      expect(p.stdout).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.skipIf(!realAvailable)('the marketplace in two worker processes on one port', () => {
  let b: Backend;
  let dataDir: string;
  let service: ServiceProcess;
  let url: string;
  const conns: Connection[] = [];
  const connect = (): Connection => {
    const c = new Connection(url);
    conns.push(c);
    return c;
  };

  beforeAll(async () => {
    b = await openReal();
    dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-workers-'));
    service = ServiceProcess.spawn('workers', {
      MARKET_WORKERS: '2',
      DATABASE_URL,
      ANMPAY_DB_SCHEMA: b.schema!,
      DATABASE_POOL_SIZE: '4',
      NATS_URL,
      NATS_NAMESPACE: b.namespace!,
      MARKETPLACE_FEE_ADDRESS_USDC: FEE_USDC,
      ANMPAY_DEMO_SELLER: '0',
      PORT: '0',
      MARKETPLACE_PORT: '0',
      DEVNET_PORT: '0',
      DEVNET_BLOCK_MS: '0',
      HOST: '127.0.0.1',
      ANMPAY_DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    });
    const line = await service.waitForLog(/^marketplace listening on \S+ \(2 worker processes\)$/, 150_000);
    url = line.split(' ')[3]!;
    await service.waitForLog(/^started$/);
  }, 180_000);

  afterAll(async () => {
    for (const c of conns) c.close();
    await service?.stop();
    await b?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('a listing registered through one worker is found through the other; a quote from one is bought through the other', async () => {
    const pids = pidsIn(service.stdout);
    expect([...pids.keys()].sort()).toEqual([0, 1]);
    expect(new Set(pids.values()).size).toBe(2);
    // Two connections opened one after the other go to the two workers in turn. Each worker
    // keeps its own per-IP buckets, so the first faucet call on each leaves the full limit
    // less one: proof that the connections reach two processes.
    const a = connect();
    const c = connect();
    const buyer = privateKeyToAccount(generatePrivateKey());
    const fundA = await a.request('POST', '/api/v1/usdc/faucet', { address: buyer.address, amount: '1000000' });
    const fundC = await c.request('POST', '/api/v1/usdc/faucet', { address: buyer.address, amount: '1000000' });
    expect([fundA.status, fundC.status]).toEqual([200, 200]);
    expect(fundC.headers['x-ratelimit-remaining']).toBe(fundA.headers['x-ratelimit-remaining']);

    const s = seller();
    const word = `workers${Date.now()}`;
    const registered = await a.request('POST', '/api/v1/resources', await signedListing(s, { name: `Forecast ${word}`, tags: [word], price: '0.02' }));
    expect(registered.status).toBe(201);
    const id = registered.json.resource_id as string;
    const t0 = Date.now();
    // The other worker's index catches up from PostgreSQL (a poll a second).
    await waitFor(async () => ((await c.request('GET', `/api/v1/search?capability=${word}`)).json.data as Json[]).some((r) => r.resource_id === id), 5_000, 'the listing in the other worker');
    expect(Date.now() - t0).toBeLessThan(5_000);

    const q = await c.request('POST', '/api/v1/route/quote', { capability: word, asset: 'USDC' });
    expect(q.status).toBe(201);
    const quoted = q.json as Quote;
    const legs = quoted.payment_requirements.accepts[0]!.extra.legs;
    expect(legs.fee.payTo).toBe(FEE_USDC);
    const paid = await a.request(
      'POST',
      '/api/v1/purchase',
      { intent_id: quoted.intent_id, payment: { legs: { seller: await signLeg(buyer, { to: legs.seller.payTo, value: legs.seller.amount }), fee: await signLeg(buyer, { to: legs.fee.payTo, value: legs.fee.amount }) } } },
      { 'idempotency-key': `workers-${Date.now()}` },
    );
    expect(paid.status).toBe(200);
    expect(paid.json.status).toBe('VERIFIED');
    expect((await c.request('GET', `/api/v1/purchases/${quoted.intent_id}`)).json.status).toBe('VERIFIED');
  }, 60_000);

  it('a worker killed is restarted under its number while the port keeps serving; SIGTERM stops every worker', async () => {
    const before = pidsIn(service.stdout);
    const victim = before.get(0)!;
    process.kill(victim, 'SIGKILL');
    await waitFor(async () => !alive(victim), 5_000, 'the worker gone');
    // Fresh connections meanwhile: every one is served (by the worker left, then by both).
    for (let i = 0; i < 10; i++) {
      const conn = connect();
      expect((await conn.request('GET', '/api/v1/search?capability=forecast')).status).toBe(200);
      conn.close();
    }
    await service.waitForLog(/^market worker 0 \(pid \d+\) stopped \(signal SIGKILL\); restarting/);
    const restarted = await waitFor(async () => {
      const pid = pidsIn(service.stdout).get(0);
      return pid !== undefined && pid !== victim && pid;
    }, 60_000, 'worker 0 again');
    expect(alive(restarted)).toBe(true);
    const after = connect();
    expect((await after.request('GET', '/api/v1/search?capability=forecast')).status).toBe(200);
    after.close();

    const workers = [restarted, before.get(1)!];
    expect(await service.stop()).toBe(0);
    for (const pid of workers) expect(alive(pid)).toBe(false);
  }, 150_000);
});
