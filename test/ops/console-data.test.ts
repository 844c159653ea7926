/**
 * The console's reads and live streams against the whole service (issue 24):
 * - the actor list filters by kind, state, merchant and id prefix and pages by cursor with no
 *   row twice or missed; the journal pages newest first;
 * - the actor stream sends the current state, then every commit, lit states included;
 * - "200 operator SSE streams add no database load per stream": with 200 overview streams and
 *   200 streams of one actor open, a commit reaches all of them while the database sees the
 *   commit's own statements and at most one shared overview refresh, not one read per stream.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../storage/db.ts';
import { waitFor } from '../helpers/backends.ts';
import { OpsClient, startOpsServices, type OpsHarness } from './harness.ts';

let h: OpsHarness;
let c: OpsClient;
const keys: Record<string, string> = {};
const ids: Record<string, string[]> = {};

async function api(key: string, method: string, p: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${h.svc}${p}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `k${Math.random()}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return (await r.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  h = await startOpsServices();
  console.log(`[ops] backends: ${h.backend}`);
  for (const name of ['a', 'b']) {
    const m = await api(h.operatorToken, 'POST', '/ops/api/merchants', { name: `Shop ${name}` });
    keys[name] = (m.keys as { test: { secret: string } }).test.secret;
    keys[`${name}_id`] = String(m.merchant_id);
    ids[name] = [];
    for (let i = 0; i < 7; i++) ids[name].push(String((await api(keys[name], 'POST', '/api/v1/payment-intents', { amount: '1' })).id));
  }
  // Two of merchant a's intents canceled: state EXPIRED.
  for (const id of ids.a!.slice(0, 2)) await api(keys.a!, 'POST', `/api/v1/payment-intents/${id}/cancel`);
  c = new OpsClient(h.svc);
  expect((await c.login(h.operatorToken)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.close();
}, 60_000);

async function all(query: string, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let after: string | null = '';
  while (after !== null) {
    const r = await c.fetch(`/ops/data/actors?${query}&limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    expect(r.status).toBe(200);
    const page = (await r.json()) as { rows: Array<{ id: string }>; next: string | null };
    expect(page.rows.length).toBeLessThanOrEqual(limit);
    seen.push(...page.rows.map((x) => x.id));
    after = page.next;
  }
  return seen;
}

describe('actor list and journal', () => {
  it('filters by kind, state, merchant and id prefix; cursor pages cover each match once', async () => {
    const a = keys.a_id!;
    expect((await all(`merchant=${a}`, 3)).sort()).toEqual([...ids.a!].sort());
    expect((await all(`merchant=${a}&state=EXPIRED`, 1)).sort()).toEqual(ids.a!.slice(0, 2).sort());
    expect((await all(`merchant=${a}&state=AWAITING_PAYMENT&kind=payment_intent`, 2)).sort()).toEqual(ids.a!.slice(2).sort());
    expect(await all(`kind=refund`, 5)).toEqual([]);
    const one = ids.b![3]!;
    expect(await all(`prefix=${one.slice(0, 20)}`, 5)).toEqual([one]);
    // LIKE wildcards in a prefix are literal.
    expect(await all(`prefix=pay_%25`, 5)).toEqual([]);
    const every = await all('kind=payment_intent', 4);
    expect(new Set(every).size).toBe(every.length);
    expect(every.length).toBeGreaterThanOrEqual(14);
    expect([...every].sort()).toEqual(every);
  });

  it('the journal pages newest first by seq', async () => {
    const id = ids.a![0]!;
    const first = (await (await c.fetch(`/ops/data/actors/${id}/journal?limit=1`)).json()) as { rows: Array<{ seq: number; type: string; state_before: string | null; state_after: string }>; next: string };
    expect(first.rows.map((r) => [r.seq, r.type, r.state_after])).toEqual([[2, 'intent.cancel', 'EXPIRED']]);
    const second = (await (await c.fetch(`/ops/data/actors/${id}/journal?limit=1&before=${first.next}`)).json()) as typeof first;
    expect(second.rows.map((r) => [r.seq, r.type, r.state_before, r.state_after])).toEqual([[1, 'intent.create', null, 'AWAITING_PAYMENT']]);
    expect(second.next).toBeNull();
  });
});

describe('overview', () => {
  it('counts actors by kind and state, lists recent transitions, backlogs, failing endpoints and indexer heads', async () => {
    const a = keys.a_id!;
    const db = h.services.db;
    await db.query(`INSERT INTO webhook_endpoints (id, merchant, mode, url, status) VALUES ('we_ops_1', $1, 'test', 'https://hooks.example/x', 'active')`, [a]);
    await db.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint, merchant, mode, status, attempts, last_status, last_error)
       VALUES ('wd_ops_1', 'evt_1', 'we_ops_1', $1, 'test', 'failed', 8, 500, 'server error'), ('wd_ops_2', 'evt_2', 'we_ops_1', $1, 'test', 'pending', 2, 502, 'bad gateway')`,
      [a],
    );
    const o = (await (await c.fetch('/ops/data/overview')).json()) as {
      actors: Array<{ kind: string; state: string; count: number }>;
      recent: Array<{ actor_id: string; type: string }>;
      timers: { pending: number };
      outbox: { pending: number };
      webhooks: Array<{ endpoint: string; failing: number; url: string }>;
      indexers: Array<{ network: string; height: number; node_height: number | null; lag_blocks: number | null }>;
    };
    const count = (state: string) => o.actors.find((r) => r.kind === 'payment_intent' && r.state === state)?.count ?? 0;
    const { rows } = await db.query<{ state: string; n: number }>(`SELECT state, count(*)::int AS n FROM actors WHERE kind = 'payment_intent' GROUP BY state`);
    for (const r of rows) expect([r.state, count(r.state)]).toEqual([r.state, r.n]);
    expect(count('EXPIRED')).toBeGreaterThanOrEqual(2);
    expect(o.recent.length).toBeGreaterThan(0);
    expect(o.timers.pending).toBeGreaterThan(0); // each awaiting intent has its expiry timer
    expect(o.webhooks).toEqual([expect.objectContaining({ endpoint: 'we_ops_1', failing: 2, url: 'https://hooks.example/x' })]);
    expect(o.indexers.map((i) => i.network).sort()).toEqual(['live', 'test']);
    for (const i of o.indexers) expect(i.node_height).not.toBeNull();
  });
});

/** An SSE client that collects named events. */
function listen(p: string, cookie: string): Promise<{ events: Array<{ event: string; data: unknown }>; close: () => void }> {
  return new Promise((resolve, reject) => {
    const events: Array<{ event: string; data: unknown }> = [];
    const req = http.get(`${h.svc}${p}`, { headers: { cookie, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`${p}: ${res.statusCode}`));
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (ev && data) events.push({ event: ev, data: JSON.parse(data) });
        }
      });
      resolve({ events, close: () => req.destroy() });
    });
    req.on('error', () => undefined);
  });
}

function countQueries(db: Db): { n: number; restore(): void } {
  const original = db.query.bind(db);
  const counter = { n: 0, restore: () => void (db.query = original) };
  db.query = ((sql: string, params?: never) => {
    counter.n++;
    return original(sql, params);
  }) as Db['query'];
  return counter;
}

describe('live streams', () => {
  it('an actor stream sends the current state, then each commit with the lit states', async () => {
    const id = ids.b![0]!;
    const s = await listen(`/ops/streams/actors/${id}`, c.cookieHeader());
    try {
      await waitFor(async () => s.events.length >= 1, 10_000, 'first state');
      expect(s.events[0]).toEqual({ event: 'state', data: { version: 1, state: 'AWAITING_PAYMENT', active: ['AWAITING_PAYMENT'], event: null } });
      await api(keys.b!, 'POST', `/api/v1/payment-intents/${id}/cancel`);
      await waitFor(async () => s.events.length >= 2, 10_000, 'commit');
      expect(s.events[1]).toEqual({ event: 'state', data: { version: 2, state: 'EXPIRED', active: ['EXPIRED'], event: 'intent.cancel' } });
    } finally {
      s.close();
    }
  });

  it('200 overview and 200 actor streams: a commit reaches every one with no database read per stream', { timeout: 120_000 }, async () => {
    const id = ids.b![1]!;
    const cookie = c.cookieHeader();
    const streams: Array<Awaited<ReturnType<typeof listen>>> = [];
    for (let i = 0; i < 200; i++) streams.push(await listen('/ops/streams/overview', cookie), await listen(`/ops/streams/actors/${id}`, cookie));
    try {
      await waitFor(async () => streams.every((s) => s.events.length >= 1), 30_000, 'every stream opened');
      // Let any refresh that the opening triggered finish before counting.
      await new Promise((r) => setTimeout(r, 1500));
      const q = countQueries(h.services.db);
      try {
        await api(keys.b!, 'POST', `/api/v1/payment-intents/${id}/cancel`);
        await waitFor(async () => streams.every((s) => s.events.some((e) => e.event === 'transition' || (e.data as { state?: string }).state === 'EXPIRED')), 30_000, 'every stream saw the commit');
        // The overview refresh after a commit is shared: wait for it to reach every overview stream.
        await waitFor(async () => streams.filter((_, i) => i % 2 === 0).every((s) => s.events.filter((e) => e.event === 'overview').length >= 2), 30_000, 'shared refresh');
        console.log(`[ops] 400 streams open; statements while one commit reached all of them and the overview refreshed: ${q.n}`);
        // The cancel's own statements, one shared overview refresh (six reads) and the background
        // pollers (timer sweeper, outbox relay, webhook worker): fewer than one per open stream.
        expect(q.n).toBeLessThan(200);
      } finally {
        q.restore();
      }
    } finally {
      for (const s of streams) s.close();
    }
  });
});
