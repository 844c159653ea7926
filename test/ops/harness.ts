/**
 * The whole service in-process for the operator console tests (PostgreSQL + NATS in a schema and
 * namespace of its own when the global setup found them, PGlite + the in-process bus otherwise;
 * devnet mining only on request), a known operator token, and a cookie-keeping client that
 * logs in the way the login page does (visitor CSRF token from the page, then the token posted
 * as JSON).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName } from '../helpers/backends.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { startServices, type Services } from '../../bin/services.ts';

export interface OpsHarness {
  backend: 'PostgreSQL + NATS' | 'PGlite + in-process bus';
  services: Services;
  svc: string;
  operatorToken: string;
  dataDir: string;
  close(): Promise<void>;
}

export async function startOpsServices(): Promise<OpsHarness> {
  const operatorToken = `opt_${randomBytes(16).toString('hex')}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'anm-ops-'));
  const schema = uniqueName('ops');
  const real = realAvailable;
  const config = inProcessConfig(dataDir, operatorToken, real ? { DATABASE_URL, ANMPAY_DB_SCHEMA: schema, NATS_URL, NATS_NAMESPACE: schema } : {});
  const services = await startServices(config);
  return {
    backend: real ? 'PostgreSQL + NATS' : 'PGlite + in-process bus',
    services,
    svc: services.http!.url,
    operatorToken,
    dataDir,
    async close() {
      await services.stop();
      if (real) await dropSchema(schema);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A browser-like client: keeps cookies, sends Origin on writes, carries the page's CSRF token. */
export class OpsClient {
  private cookies = new Map<string, string>();
  csrf = '';

  constructor(
    readonly base: string,
    private readonly origin = base,
  ) {}

  async fetch(p: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; csrf?: boolean } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const method = init.method ?? 'GET';
    if (method !== 'GET') {
      headers.origin ??= this.origin;
      if (init.csrf !== false && this.csrf) headers['x-csrf-token'] = this.csrf;
    }
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.base}${p}`, { method, headers, redirect: 'manual', ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [k, v] = pair!.split('=');
      if (v === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(k!);
      else this.cookies.set(k!, v!);
    }
    return res;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** The data block of a console page. */
  static pageData(html: string): Record<string, unknown> {
    const m = /<script type="application\/json" id="anm-ops-data">([\s\S]*?)<\/script>/.exec(html);
    if (!m) throw new Error('no page data');
    return JSON.parse(m[1]!) as Record<string, unknown>;
  }

  async login(token: string): Promise<Response> {
    const page = await this.fetch('/ops/login');
    this.csrf = String(OpsClient.pageData(await page.text()).csrf);
    const res = await this.fetch('/ops/login', { method: 'POST', body: { token } });
    if (res.ok) this.csrf = String(((await res.clone().json()) as { csrf: string }).csrf);
    return res;
  }
}
