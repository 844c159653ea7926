/**
 * The real app over real HTTP for the conformance suite: `buildApp` on a fresh PostgreSQL
 * schema when PostgreSQL is reachable (PGlite otherwise), listening on port 0. Every response
 * a test sees is recorded and validated against the served OpenAPI document after the file.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildApp } from '../../gateway/app.ts';
import type { GatewayDeps } from '../../gateway/deps.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { ActorTarget } from '../../runtime/engine/actor-types.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMerchantServices, type MerchantServices } from '../../runtime/merchant/index.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { openEmbedded, openReal, realAvailable, type Backend } from '../helpers/backends.ts';
import { checkAgainstOpenApi, type Seen } from './openapi-check.ts';

export interface Limits {
  RATE_LIMIT_KEY_PER_MIN: number;
  RATE_LIMIT_KEY_BURST: number;
  RATE_LIMIT_IP_PER_MIN: number;
  RATE_LIMIT_IP_BURST: number;
}

/** Spec Limits: 100/min burst 100 per key, 300/min per IP. */
export const SPEC_LIMITS: Limits = { RATE_LIMIT_KEY_PER_MIN: 100, RATE_LIMIT_KEY_BURST: 100, RATE_LIMIT_IP_PER_MIN: 300, RATE_LIMIT_IP_BURST: 300 };
export const HIGH_LIMITS: Limits = { RATE_LIMIT_KEY_PER_MIN: 1e6, RATE_LIMIT_KEY_BURST: 1e6, RATE_LIMIT_IP_PER_MIN: 1e6, RATE_LIMIT_IP_BURST: 1e6 };

export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  raw: Buffer;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- assertions read arbitrary fields
}

export interface ReqOptions {
  key?: string | undefined;
  headers?: Record<string, string | string[]>;
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  idem?: string;
  /** Source address (any 127.x.y.z) to exercise the per-IP bucket. */
  from?: string;
}

export interface Harness {
  url: string;
  backend: Backend;
  services: MerchantServices;
  deps: GatewayDeps;
  /** A fresh merchant with test and live keys (live has a payout address set). */
  merchant(): Promise<CreatedMerchant>;
  req(method: string, path: string, opts?: ReqOptions): Promise<Res>;
  /** Runs before every actor event; tests use it to hold or fail an apply. */
  hooks: { beforeApply?: (target: ActorTarget, event: unknown) => Promise<void> };
  count(table: string): Promise<number>;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function request(url: string, method: string, path: string, opts: ReqOptions = {}): Promise<Res> {
  const headers: Record<string, string | string[]> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.idem !== undefined) headers['idempotency-key'] = opts.idem;
  let payload: Buffer | undefined;
  if (opts.body !== undefined) {
    payload = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
    headers['content-type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    const u = new URL(path, url);
    const r = http.request(
      { method, hostname: u.hostname, port: u.port, path: u.pathname + u.search, headers, agent: opts.from ? undefined : agent, localAddress: opts.from },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, raw, json });
        });
      },
    );
    r.on('error', reject);
    r.end(payload);
  });
}

/**
 * HTTP_DRAIN_MS for the edges `expectDrainOnClose` stops: the two requests it sends while the
 * edge drains must be answered before the listener closes, however loaded the machine.
 */
export const DRAIN_MS = 2_000;

/**
 * An edge closing with a drain time (docs/deploy.md "Stopping"): `/healthz` answers 200, then
 * 503 `draining` from the moment `close()` is called, and `during` (a request still answered) is
 * checked meanwhile; after it the listener is gone.
 */
export async function expectDrainOnClose(edge: { url: string; close(): Promise<void> }, during: () => Promise<Res>, expected: number): Promise<void> {
  expect((await request(edge.url, 'GET', '/healthz')).status).toBe(200);
  const closing = edge.close();
  const health = await request(edge.url, 'GET', '/healthz');
  expect([health.status, health.json]).toEqual([503, { status: 'draining' }]);
  expect((await during()).status).toBe(expected);
  await closing;
  await expect(request(edge.url, 'GET', '/healthz')).rejects.toThrow();
}

export async function openHarness(limits: Limits = SPEC_LIMITS, extra: { ANM_RATES?: string } = {}): Promise<Harness & { close(): Promise<void>; seen: Seen[] }> {
  const backend = realAvailable ? await openReal() : await openEmbedded();
  const services = await openMerchantServices(
    backend.db,
    { ANMPAY_DATA_DIR: '.data', ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'), ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`, RATE_SOURCE_URL: undefined, ANM_RATES: extra.ANM_RATES, ...limits },
    { demo: false },
  );
  const engineHost = new ActorHost({ db: backend.db, bus: backend.bus, registry: machineRegistry() });
  const hooks: Harness['hooks'] = {};
  let url = '';
  const deps: GatewayDeps = {
    ...services,
    host: {
      apply: async (target, event) => {
        await hooks.beforeApply?.(target, event);
        return engineHost.apply(target, event);
      },
    },
    baseUrl: () => url,
    dbHealthy: async () => true,
    lifecycle: { draining: false },
  };
  const app = await buildApp(deps);
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  const seen: Seen[] = [];
  return {
    url,
    backend,
    services,
    deps,
    hooks,
    seen,
    async merchant() {
      const m = await services.merchants.create({ name: `Shop ${randomBytes(3).toString('hex')}` });
      await services.merchants.setPayoutAddress(m.merchant_id, 'live', `anm1live${m.merchant_id.slice(4)}`);
      return m;
    },
    async req(method, path, opts) {
      const res = await request(url, method, path, opts);
      seen.push({ method, path: path.split('?')[0]!, status: res.status, body: res.json, headers: res.headers });
      return res;
    },
    async count(table) {
      const { rows } = await backend.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      return rows[0]!.n;
    },
    async close() {
      await app.close();
      await backend.close();
    },
  };
}

/** One harness per test file; after the file, every response seen must match the OpenAPI document. */
export function useHarness(limits?: Limits, extra?: { ANM_RATES?: string }): () => Harness {
  let h: Awaited<ReturnType<typeof openHarness>> | undefined;
  beforeAll(async () => {
    h = await openHarness(limits, extra);
  });
  afterAll(async () => {
    if (!h) return;
    try {
      const doc = (await request(h.url, 'GET', '/api/v1/openapi.json')).json as Record<string, unknown>;
      const problems = checkAgainstOpenApi(doc, h.seen);
      expect(problems, `${h.seen.length} responses checked against /api/v1/openapi.json`).toEqual([]);
    } finally {
      await h.close();
    }
  });
  return () => {
    if (!h) throw new Error('harness not open');
    return h;
  };
}

/** A create body with sensible defaults. */
export function intentBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { amount: '1.5', description: 'Conformance', metadata: { order: 'c-1' }, ...over };
}

export function idem(): string {
  return `idem-${randomBytes(8).toString('hex')}`;
}
