/**
 * The real app (buildApp) with the engine's actor host and a snapshot feed on the same bus,
 * over real HTTP, on real PostgreSQL + NATS when reachable (PGlite + in-process bus
 * otherwise). Every database call goes through a counting wrapper so tests can show what
 * open event streams cost the database. Intents are driven by applying chain events directly
 * to the actor (the chain indexer's job in production).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../gateway/app.ts';
import type { GatewayDeps } from '../../gateway/deps.ts';
import type { PaymentIntentEvent } from '../../machines/payment-intent/events.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { ApplyResult } from '../../runtime/engine/actor-types.ts';
import { SnapshotFeed } from '../../runtime/engine/snapshot-feed.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMerchantServices, type MerchantServices } from '../../runtime/merchant/index.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { randomId } from '../../runtime/merchant/secrets.ts';
import { createEvent } from '../fixtures/payment-intent.ts';
import { openEmbedded, openReal, realAvailable, type Backend } from '../helpers/backends.ts';
import { countingDb, type CountingDb } from '../helpers/counting-db.ts';

export interface CheckoutHarness {
  url: string;
  app: FastifyInstance;
  backend: Backend;
  db: CountingDb;
  services: MerchantServices;
  deps: GatewayDeps;
  /** A merchant with keys; allowed origins as given. */
  merchant(opts?: { name?: string; origins?: string[] }): Promise<CreatedMerchant>;
  /** Creates an intent owned by `merchant` (test mode unless told) and returns its id. */
  intent(merchant: string, over?: Parameters<typeof createEvent>[0]): Promise<string>;
  apply(id: string, event: PaymentIntentEvent): Promise<ApplyResult>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  heartbeatMs?: number;
  maxPerIp?: number;
  maxStreams?: number;
  now?: () => number;
}

export async function openCheckoutHarness(opts: HarnessOptions = {}): Promise<CheckoutHarness> {
  const backend = realAvailable ? await openReal({ poolSize: 8 }) : await openEmbedded();
  const db = countingDb(backend.db);
  const services = await openMerchantServices(
    db,
    {
      ANMPAY_DATA_DIR: '.data',
      ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'),
      ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`,
      RATE_SOURCE_URL: undefined,
      ANM_RATES: undefined,
      RATE_LIMIT_KEY_PER_MIN: 1e6,
      RATE_LIMIT_KEY_BURST: 1e6,
      RATE_LIMIT_IP_PER_MIN: 1e6,
      RATE_LIMIT_IP_BURST: 1e6,
    },
    { demo: false },
  );
  const host = new ActorHost({ db, bus: backend.bus, registry: machineRegistry() });
  const feed = new SnapshotFeed(backend.bus);
  feed.start();
  let url = '';
  const deps: GatewayDeps = {
    ...services,
    host,
    feed,
    checkoutStreams: { heartbeatMs: opts.heartbeatMs ?? 15_000, maxPerIp: opts.maxPerIp ?? 1000, maxStreams: opts.maxStreams ?? 10_000 },
    baseUrl: () => url,
    dbHealthy: async () => true,
    lifecycle: { draining: false },
    ...(opts.now ? { now: opts.now } : {}),
  };
  const app = await buildApp(deps);
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  const treasury = services.treasury.test;
  return {
    url,
    app,
    backend,
    db,
    services,
    deps,
    async merchant(o = {}) {
      return services.merchants.create({ name: o.name ?? `Shop ${randomBytes(3).toString('hex')}`, allowed_origins: o.origins ?? [] });
    },
    async intent(merchant, over = {}) {
      const id = randomId('pay_');
      const now = Date.now();
      const e = createEvent({
        intent_id: id,
        merchant_id: merchant,
        mode: 'test',
        at: now,
        expires_at: now + 30 * 60_000,
        treasury_address: treasury,
        payment_address: 'tanm1merchantpayoutaddressfortests',
        payment_reference: `pr1:${randomBytes(20).toString('hex').slice(0, 32)}`,
        merchant_order_id: null,
        ...over,
      });
      const r = await host.apply({ kind: 'payment_intent', id, merchant, mode: e.mode }, e);
      if (r.outcome !== 'applied') throw new Error(`create ${id}: ${r.outcome}`);
      return id;
    },
    async apply(id, event) {
      return host.apply({ kind: 'payment_intent', id }, event);
    },
    async close() {
      await app.close();
      await feed.stop();
      await backend.close();
    },
  };
}

/** One Server-Sent Events message as a test sees it. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** A raw SSE client over node:http (no EventSource: tests see every byte and header). */
export class SseClient {
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  readonly events: SseEvent[] = [];
  comments = 0;
  ended = false;
  private buf = '';
  private req: http.ClientRequest | undefined;
  private waiters: Array<() => void> = [];
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor() {
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    return new Promise((resolve, reject) => {
      const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => c.feed(chunk));
        res.on('end', () => c.finish());
        res.on('close', () => c.finish());
        resolve(c);
      });
      req.on('error', (err) => {
        if (c.status === 0) reject(err);
        else c.finish();
      });
      c.req = req;
    });
  }

  statuses(): Array<{ id: string | undefined; status: string; confirmations: number; version: number; [k: string]: unknown }> {
    return this.events.filter((e) => e.event === 'status').map((e) => ({ id: e.id, ...(JSON.parse(e.data) as { status: string; confirmations: number; version: number }) }));
  }

  /** Resolves once `pred` holds (checked on every message), or rejects after `ms`. */
  async until(pred: (c: SseClient) => boolean, ms = 10_000, what = 'condition'): Promise<void> {
    if (pred(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`SSE: timed out waiting for ${what}; got ${JSON.stringify(this.events)}`)), ms);
      const check = () => {
        if (pred(this)) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  close(): void {
    this.req?.destroy();
  }

  private feed(chunk: string): void {
    this.buf += chunk;
    let i: number;
    while ((i = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      let id: string | undefined;
      let event = 'message';
      const data: string[] = [];
      let fields = 0;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const c = line.indexOf(':');
        const name = c < 0 ? line : line.slice(0, c);
        const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
        fields++;
        if (name === 'id') id = value;
        else if (name === 'event') event = value;
        else if (name === 'data') data.push(value);
      }
      if (fields > 0 && data.length > 0) this.events.push({ id, event, data: data.join('\n') });
    }
    this.wake();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.resolveDone();
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
