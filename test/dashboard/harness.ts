/**
 * The whole service started in-process for the dashboard tests (`startServices`): real
 * PostgreSQL + NATS when reachable (a schema and namespace of its own), PGlite + in-process bus
 * otherwise; the devnet mines only on request. `client()` is a browser-like HTTP client of
 * `/dashboard`: it keeps the session cookie, sends this site's Origin and the CSRF token.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServices, type Services } from '../../bin/services.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName } from '../helpers/backends.ts';
import { cliJson } from '../helpers/cli.ts';
import { inProcessConfig } from '../helpers/service-config.ts';

export interface DashHarness {
  services: Services;
  svc: string;
  dataDir: string;
  operatorToken: string;
  /** The login the first start's banner printed (the demo merchant). */
  demoLogin: { email: string; password: string };
  /** A new merchant through the operator API (login, keys). */
  merchant(name?: string): Promise<CreatedMerchant>;
  /** A payment intent of `secretKey`'s merchant. */
  intent(secretKey: string, body: Record<string, unknown>): Promise<{ id: string; anm_amount: string }>;
  cli(args: string[]): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface DashResponse {
  status: number;
  headers: Headers;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
  text: string;
}

export interface DashClient {
  cookie: string;
  csrf: string;
  req(method: string, p: string, body?: unknown, extra?: { origin?: string | null; csrf?: string | null; headers?: Record<string, string> }): Promise<DashResponse>;
  /** Visits the login page (visitor session + token), then logs in. */
  login(email: string, password: string): Promise<DashResponse>;
}

export async function startDashHarness(env: Record<string, string> = {}): Promise<DashHarness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'anm-dash-'));
  const schema = realAvailable ? uniqueName('dash') : undefined;
  const operatorToken = `opt_${randomBytes(16).toString('hex')}`;
  const config = inProcessConfig(dataDir, operatorToken, {
    ANMPAY_ALLOW_PRIVATE_WEBHOOKS: '1',
    ANMPAY_ROLES: 'gateway,runtime,indexer',
    ...(schema ? { DATABASE_URL, NATS_URL, ANMPAY_DB_SCHEMA: schema, NATS_NAMESPACE: schema } : {}),
    ...env,
  });
  // The banner goes to stdout; read it as a user would.
  let printed = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    printed += String(chunk);
    return true;
  });
  let services: Services;
  try {
    services = await startServices(config);
  } finally {
    process.stdout.write = write;
  }
  const banner = /login\s+(\S+) \/ (\S+)/.exec(printed);
  if (!banner) throw new Error(`no login in the first start's banner: ${printed}`);
  const svc = services.http!.url;
  const ops = async (p: string, body: unknown) => {
    const r = await fetch(`${svc}${p}`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<unknown>;
  };
  return {
    services,
    svc,
    dataDir,
    operatorToken,
    demoLogin: { email: banner[1]!, password: banner[2]! },
    merchant: async (name = 'Dash Shop') => (await ops('/ops/api/merchants', { name })) as CreatedMerchant,
    async intent(secretKey, body) {
      const r = await fetch(`${svc}/api/v1/payment-intents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json', 'idempotency-key': randomBytes(8).toString('hex') },
        body: JSON.stringify(body),
      });
      if (r.status !== 201) throw new Error(`create: ${r.status} ${await r.text()}`);
      return r.json() as Promise<{ id: string; anm_amount: string }>;
    },
    cli: (args) => cliJson(args, { ANMPAY_URL: svc, ANMPAY_DEVNET_URL: services.devnet!.url, ANMPAY_DATA_DIR: dataDir, ANMPAY_OPERATOR_TOKEN: operatorToken }),
    async close() {
      await services.stop();
      await rm(dataDir, { recursive: true, force: true });
      if (schema) await dropSchema(schema).catch(() => undefined);
    },
  };
}

export function dashClient(svc: string): DashClient {
  const c: DashClient = {
    cookie: '',
    csrf: '',
    async req(method, p, body, extra = {}) {
      const headers: Record<string, string> = { ...extra.headers };
      if (c.cookie) headers.cookie = `anm_session=${c.cookie}`;
      if (method !== 'GET') {
        if (extra.origin !== null) headers.origin = extra.origin ?? svc;
        const token = extra.csrf === undefined ? c.csrf : extra.csrf;
        if (token) headers['x-csrf-token'] = token;
      }
      if (body !== undefined) headers['content-type'] = 'application/json';
      const r = await fetch(`${svc}${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
      const set = /anm_session=([^;]*)/.exec(r.headers.get('set-cookie') ?? '');
      if (set) c.cookie = set[1]!;
      const text = await r.text();
      let json = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // An HTML page or an empty body.
      }
      if (typeof (json as { csrf?: unknown }).csrf === 'string') c.csrf = (json as { csrf: string }).csrf;
      return { status: r.status, headers: r.headers, json, text };
    },
    async login(email, password) {
      const page = await c.req('GET', '/dashboard/login');
      const m = /"csrf":"([^"]+)"/.exec(page.text);
      if (m) c.csrf = m[1]!;
      return c.req('POST', '/dashboard/api/login', { email, password });
    },
  };
  return c;
}
