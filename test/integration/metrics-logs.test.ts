/**
 * `/metrics` and the request log (DESIGN §6 "Observability: JSON logs with request ids (pino
 * through Fastify), `/healthz`, a Prometheus `/metrics` endpoint"; §7 "Operator console": the
 * series). The scrape is parsed with a Prometheus text parser; counters must move after
 * traffic; no label may hold an id or a raw path; the scrape time is measured (target < 20 ms).
 */
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../gateway/app.ts';
import { startMetricsServer } from '../../gateway/http/metrics-server.ts';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { OutboxRelay } from '../../runtime/engine/outbox-relay.ts';
import { TimerSweeper } from '../../runtime/engine/timer-sweeper.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { recordIndexedBlock, recordIndexerHead, recordOutboxBatch, recordTimerSweep, recordWebhookDelivery, trackSseStreams } from '../../runtime/ops/metrics.ts';
import { idem, intentBody, openHarness, request } from '../conformance/harness.ts';

type H = Awaited<ReturnType<typeof openHarness>>;
let h: H;
let token: string;

async function scrape(url = h.url): Promise<PromFamily[]> {
  const res = await request(url, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(res.text);
}

function value(families: PromFamily[], name: string, labels: Record<string, string>): number {
  const f = families.find((x) => x.name === name);
  const m = f?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  return m?.value === undefined ? 0 : Number(m.value);
}

/** Anything that looks like one of our ids, a key, or a concrete path with an id in it. */
const ID_LIKE = /(pay|pi|re|req|mer|evt|we|hold|inv|plink|pur|lst)_[A-Za-z0-9]{6,}|ask_|apk_|[0-9a-f]{16,}|anm1[a-z0-9]{10,}|0x[0-9a-f]{8,}/i;

beforeAll(async () => {
  h = await openHarness();
  token = h.deps.operatorToken;
}, 60_000);
afterAll(async () => h?.close());

describe('/metrics', () => {
  it('refuses a scrape without the operator token, in the error envelope', async () => {
    for (const auth of [undefined, 'Bearer wrong-token-wrong-token', `Basic ${token}`]) {
      const res = await request(h.url, 'GET', '/metrics', auth ? { headers: { authorization: auth } } : {});
      expect(res.status).toBe(401);
      const body = res.json as { error: { code: string; request_id: string } };
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.request_id).toMatch(/^req_/);
    }
  });

  it('parses as Prometheus text and has every series of DESIGN §7', async () => {
    const names = new Set((await scrape()).map((f) => f.name));
    for (const n of [
      'anm_http_requests_total',
      'anm_actor_events_total',
      'anm_actor_step_seconds',
      'anm_outbox_lag_seconds',
      'anm_timer_lag_seconds',
      'anm_webhook_deliveries_total',
      'anm_indexer_head_height',
      'anm_indexer_lag_blocks',
      'anm_sse_streams_open',
      'process_cpu_seconds_total',
    ])
      expect(names, n).toContain(n);
  });

  it('counters move after traffic: requests by route template and status, actor events by kind and outcome', async () => {
    const m = await h.merchant();
    const before = await scrape();
    const created = await h.req('POST', '/api/v1/payment-intents', { key: m.keys.test.secret, idem: idem(), body: intentBody() });
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;
    expect((await h.req('GET', `/api/v1/payment-intents/${id}`, { key: m.keys.test.secret })).status).toBe(200);
    expect((await h.req('GET', `/api/v1/payment-intents/${id}x`, { key: m.keys.test.secret })).status).toBe(404);
    expect((await h.req('GET', `/no/such/${id}`)).status).toBe(404);
    const after = await scrape();
    const http = (route: string, status: string, f: PromFamily[]) => value(f, 'anm_http_requests_total', { app: 'merchant', route, status });
    expect(http('/api/v1/payment-intents', '201', after) - http('/api/v1/payment-intents', '201', before)).toBe(1);
    expect(http('/api/v1/payment-intents/:id', '200', after) - http('/api/v1/payment-intents/:id', '200', before)).toBe(1);
    expect(http('/api/v1/payment-intents/:id', '404', after) - http('/api/v1/payment-intents/:id', '404', before)).toBe(1);
    expect(http('unmatched', '404', after) - http('unmatched', '404', before)).toBe(1);
    const applied = (f: PromFamily[]) => value(f, 'anm_actor_events_total', { kind: 'payment_intent', outcome: 'applied' });
    expect(applied(after) - applied(before)).toBeGreaterThanOrEqual(1);
    // The parser keeps a histogram's buckets but not its labels: read the count line itself.
    const raw = (await request(h.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } })).text;
    const count = /^anm_actor_step_seconds_count\{kind="payment_intent"\} (\d+)$/m.exec(raw)?.[1];
    expect(Number(count)).toBeGreaterThanOrEqual(1);
    expect(after.find((f) => f.name === 'anm_actor_step_seconds')?.type).toBe('HISTOGRAM');
  });

  it('the outbox relay and the timer sweeper report what they publish, and how late', async () => {
    const m = await h.merchant();
    expect((await h.req('POST', '/api/v1/payment-intents', { key: m.keys.test.secret, idem: idem(), body: intentBody() })).status).toBe(201);
    const before = await scrape();
    const host = new ActorHost({ db: h.backend.db, bus: h.backend.bus, registry: machineRegistry() });
    let published = 0;
    for (let n = -1; n !== 0; ) published += n = await new OutboxRelay(h.backend.db, h.backend.bus).drainOnce();
    // An hour from now every intent's expiry timer is due, and an hour late at the latest.
    const fired = await new TimerSweeper(h.backend.db, host, { now: () => Date.now() + 3_600_000, batch: 1000 }).sweepOnce();
    const after = await scrape();
    const delta = (name: string) => value(after, name, {}) - value(before, name, {});
    expect(published).toBeGreaterThan(0);
    expect(delta('anm_outbox_published_total')).toBe(published);
    expect(fired).toBeGreaterThan(0);
    expect(delta('anm_timers_fired_total')).toBe(fired);
    expect(value(after, 'anm_timer_lag_seconds', {})).toBeGreaterThan(0);
  });

  it('backlog, webhook and indexer series take what the runtime reports', async () => {
    recordOutboxBatch(3, 0.25);
    recordTimerSweep(2, 1.5);
    recordWebhookDelivery('retried');
    recordIndexerHead('test', 120);
    recordIndexedBlock('test', 117);
    const untrack = trackSseStreams('checkout', () => 2);
    const f = await scrape();
    untrack();
    expect(value(f, 'anm_outbox_lag_seconds', {})).toBe(0.25);
    expect(value(f, 'anm_timer_lag_seconds', {})).toBe(1.5);
    expect(value(f, 'anm_webhook_deliveries_total', { outcome: 'retried' })).toBeGreaterThanOrEqual(1);
    expect(value(f, 'anm_indexer_head_height', { network: 'test' })).toBe(120);
    expect(value(f, 'anm_indexer_lag_blocks', { network: 'test' })).toBe(3);
    // This app has no snapshot feed, so no checkout hub of its own: only the source above counts.
    expect(value(f, 'anm_sse_streams_open', { surface: 'checkout' })).toBe(2);
  });

  it('no label holds an id, a key or a raw path', async () => {
    const f = await scrape();
    const bad: string[] = [];
    for (const fam of f) for (const s of fam.metrics) for (const [k, v] of Object.entries(s.labels ?? {})) if (ID_LIKE.test(v)) bad.push(`${fam.name}{${k}="${v}"}`);
    expect(bad).toEqual([]);
    const routes = new Set(f.find((x) => x.name === 'anm_http_requests_total')!.metrics.map((s) => s.labels!.route!));
    for (const r of routes) expect(r === 'unmatched' || r.startsWith('/'), r).toBe(true);
  });

  it('the Grafana dashboard (docs/grafana-dashboard.json) plots only series the service exports', async () => {
    const dashboard = await readFile(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8');
    const used = new Set([...dashboard.matchAll(/\b((?:anm|process|nodejs)_[a-z0-9_]+)/g)].map((x) => x[1]!.replace(/_(bucket|sum|count)$/, '')));
    const exported = new Set((await scrape()).map((f) => f.name));
    expect(used.size).toBeGreaterThan(10);
    for (const name of used) expect(exported, name).toContain(name);
  });

  it('a scrape takes under 20 ms (median of 50, printed)', async () => {
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      await request(h.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const median = times[25]!;
    const p90 = times[45]!;
    console.log(`[metrics] /metrics scrape over HTTP: median ${median.toFixed(2)} ms, p90 ${p90.toFixed(2)} ms (50 scrapes)`);
    expect(median).toBeLessThan(20);
  });

  it('the marketplace app serves /metrics too, with its own app label', async () => {
    const host = new ActorHost({ db: h.backend.db, bus: h.backend.bus, registry: machineRegistry() });
    const market = openMarket(h.backend.db, host, { feeAddresses: { USDC: '0x000000000000000000000000000000000000fee0', ANM: 'anm1fee' } });
    const app = await buildMarketApp({ ...market, operatorToken: token });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      expect((await request(url, 'GET', '/api/v1/resources')).status).toBe(200);
      expect((await request(url, 'GET', '/metrics')).status).toBe(401);
      const f = await scrape(url);
      expect(value(f, 'anm_http_requests_total', { app: 'marketplace', route: '/api/v1/resources', status: '200' })).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });
});

describe('METRICS_PORT', () => {
  it('a process without an app serves /metrics alone on its own listener, under the same token', async () => {
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, operatorToken: token });
    try {
      expect((await request(server.url, 'GET', '/metrics')).status).toBe(401);
      const names = (await scrape(server.url)).map((f) => f.name);
      expect(names).toContain('anm_actor_events_total');
      const other = await request(server.url, 'GET', '/api/v1/balance');
      expect(other.status).toBe(404);
      expect((other.json as { error: { code: string } }).error.code).toBe('not_found');
    } finally {
      await server.close();
    }
  });
});

describe('request log', () => {
  it('writes pino JSON lines carrying our request id; /healthz and /metrics are not logged at info', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    const app = await buildApp({ ...h.deps, logger: { level: 'info', stream } });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await request(url, 'GET', '/api/v1/balance');
      expect(res.status).toBe(401);
      const id = String(res.headers['request-id']);
      expect(id).toMatch(/^req_/);
      await request(url, 'GET', '/healthz');
      await request(url, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
      await new Promise((r) => setTimeout(r, 50));
      const mine = lines.filter((l) => l.reqId === id);
      expect(mine.map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
      expect((mine[0]!.req as { url: string }).url).toBe('/api/v1/balance');
      expect((mine[1]!.res as { statusCode: number }).statusCode).toBe(401);
      const urls = lines.map((l) => (l.req as { url?: string } | undefined)?.url).filter(Boolean);
      expect(urls).not.toContain('/healthz');
      expect(urls).not.toContain('/metrics');
      // The operator token never reaches the log.
      expect(JSON.stringify(lines)).not.toContain(token);
    } finally {
      await app.close();
    }
  });
});
