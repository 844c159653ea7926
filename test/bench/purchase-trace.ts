/**
 * BENCH_TRACE=1 in `npm run bench:market` (market-serve.ts's workers): where each purchase's
 * time goes in the service, under load. Every purchase gets time marks at the steps of its
 * path, keyed by its intent id: the request read, its handler, the idempotency claim handed to
 * the key batcher (purchase-keys.ts), the claim's statement asked of the pool, written to the
 * database's socket and its ReadyForQuery read, the claim answered, the legs verified (the
 * VERIFIED event handed to the engine), the same three marks for the statement that writes it
 * (update-batch.ts), that write answered, and the answer's end written. Each statement also
 * keeps how many purchases it carried and the pool's queue when it was asked. At each `end`,
 * the purchases counted since `begin` are sorted by their time in the service and the median
 * of each segment is printed for those around the median and for the slowest 1 %.
 * The marks are monkey patches of the pg driver and pool, Fastify hooks and the services'
 * methods, installed only with the flag: without it nothing of this is loaded. With it, the
 * sampling connection's CPU counts in the rows' PostgreSQL column: read CPU figures from runs
 * without the flag.
 */
import http from 'node:http';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import type { MarketServices } from '../../runtime/market/index.ts';
import { fmt, percentile } from './stats.ts';
import { after, before, PG_QUERY_PROTO } from './trace-patch.ts';

const ORDER = [
  'in', // Fastify's onRequest
  'handler', // preHandler: the body parsed
  'claim', // the claim handed to the key batcher
  'claim_ask', // its statement asked of the pool
  'claim_wire', // written to the database's socket (a connection was free)
  'claim_ready', // its ReadyForQuery read
  'claimed', // the claim's promise settles
  'verified', // both legs verified: the VERIFIED event handed to the engine
  'write_ask', // the statement writing it asked of the pool
  'write_wire',
  'write_ready',
  'written', // the event's promise settles
  'out', // the answer's end written to the socket
] as const;
type Mark = (typeof ORDER)[number];
type Kind = 'claim' | 'write';

interface Purchase {
  marks: Partial<Record<Mark, number>>;
  /** Purchases in the statement that carried it, and the pool's queue when it was asked. */
  claimSize?: number;
  claimQueue?: number;
  writeSize?: number;
  writeQueue?: number;
  /** Statements of each kind that named it: more than one when a batch failed and it was sent alone. */
  claims: number;
  writes: number;
}

interface Statement {
  kind: Kind;
  ids: string[];
}

const VERIFY_ID = /verify:(pi_[0-9a-z]+)/g;

/** The purchase statements' kind and the intents they name, from their text and parameters; undefined for any other. */
export function classify(text: string, values: unknown[] | undefined): Statement | undefined {
  const first = values?.[0];
  if (text.includes('INSERT INTO idempotency_keys')) {
    const ids = Array.isArray(first) ? (first as string[]) : typeof first === 'string' ? [first] : [];
    return { kind: 'claim', ids: ids.filter((id) => id.startsWith('pi_')) };
  }
  if (!text.includes('UPDATE actors')) return undefined;
  const ids = new Set<string>();
  for (const v of values ?? []) if (typeof v === 'string') for (const m of v.matchAll(VERIFY_ID)) ids.add(m[1]!);
  return ids.size > 0 ? { kind: 'write', ids: [...ids] } : undefined;
}

/**
 * What the pool's backends wait on while they run a purchase statement, sampled from
 * pg_stat_activity every SAMPLE_MS by a connection of its own: a lock, the WAL's flush, or
 * nothing (on CPU, or waiting for it). Counts by statement kind and wait event.
 */
const SAMPLE_MS = 5;
function sampleWaits(databaseUrl: string): { start(): void; stop(): Promise<Map<string, number>> } {
  const app = new URL(databaseUrl).searchParams.get('application_name');
  const counts = new Map<string, number>();
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  const sample = async (c: pg.Client): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      const { rows } = await c.query<{ kind: string; wait: string }>(
        `SELECT CASE WHEN query LIKE '%INSERT INTO idempotency_keys%' THEN 'claim' WHEN query LIKE '%UPDATE actors%' THEN 'write' ELSE 'other' END AS kind,
                coalesce(wait_event_type || ':' || wait_event, 'none (CPU)') AS wait
           FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [app],
      );
      for (const r of rows) counts.set(`${r.kind} ${r.wait}`, (counts.get(`${r.kind} ${r.wait}`) ?? 0) + 1);
    } finally {
      busy = false;
    }
  };
  return {
    start() {
      counts.clear();
      const c = new pg.Client({ connectionString: databaseUrl });
      client = c;
      void c.connect().then(() => {
        timer = setInterval(() => void sample(c).catch(() => undefined), SAMPLE_MS);
      });
    },
    async stop() {
      clearInterval(timer);
      await client?.end().catch(() => undefined);
      return counts;
    },
  };
}

export function tracePurchases(o: { app: FastifyInstance; market: MarketServices; databaseUrl: string }): { begin(): void; report(): Promise<string | undefined> } {
  let counting = false;
  const waits = sampleWaits(o.databaseUrl);
  const open = new Map<string, Purchase>();
  const done: Purchase[] = [];
  const mark = (id: string, k: Mark): void => {
    const p = open.get(id);
    if (p && p.marks[k] === undefined) p.marks[k] = performance.now();
  };

  const IN = Symbol('in');
  const PURCHASE = Symbol('purchase');
  type Tagged = { [IN]?: number; [PURCHASE]?: Purchase };
  o.app.addHook('onRequest', (req, _reply, next) => {
    (req.raw as Tagged)[IN] = performance.now();
    next();
  });
  o.app.addHook('preHandler', (req, reply, next) => {
    const id = (req.body as { intent_id?: unknown } | undefined)?.intent_id;
    if (counting && req.routeOptions.url === '/api/v1/purchase' && typeof id === 'string') {
      const p: Purchase = { marks: { in: (req.raw as Tagged)[IN]!, handler: performance.now() }, claims: 0, writes: 0 };
      open.set(id, p);
      (reply.raw as Tagged)[PURCHASE] = p;
    }
    next();
  });
  before(http.ServerResponse.prototype, 'end', (res) => {
    const p = (res as Tagged)[PURCHASE];
    if (!p || p.marks.out !== undefined) return;
    p.marks.out = performance.now();
    done.push(p);
  });

  const keys = o.market.purchaseKeys;
  const claim = keys.claim.bind(keys);
  keys.claim = (intentId, ...rest) => {
    mark(intentId, 'claim');
    const r = claim(intentId, ...rest);
    r.then(() => mark(intentId, 'claimed'), () => undefined);
    return r;
  };
  const purchases = o.market.purchases;
  const recordLegs = purchases.recordLegs.bind(purchases);
  purchases.recordLegs = (ctx, ...rest) => {
    mark(ctx.intent_id, 'verified');
    const r = recordLegs(ctx, ...rest);
    r.then(() => mark(ctx.intent_id, 'written'), () => undefined);
    return r;
  };

  // The statements: asked of the pool (with its queue then), written, answered. The driver's
  // Query keeps the parameter array the pool was given, which finds the statement again.
  const statements = new WeakMap<object, Statement>();
  type PoolCounts = { waitingCount: number };
  before(pg.Pool.prototype, 'query', (pool, [config]) => {
    const c = config as { text?: string; values?: unknown[] } | undefined;
    if (!counting || typeof c?.text !== 'string' || !c.values) return;
    const s = classify(c.text, c.values);
    if (!s) return;
    statements.set(c.values, s);
    const queue = (pool as unknown as PoolCounts).waitingCount;
    for (const id of s.ids) {
      const p = open.get(id);
      if (!p) continue;
      mark(id, `${s.kind}_ask`);
      if (s.kind === 'claim') {
        p.claims++;
        p.claimSize ??= s.ids.length;
        p.claimQueue ??= queue;
      } else {
        p.writes++;
        p.writeSize ??= s.ids.length;
        p.writeQueue ??= queue;
      }
    }
  });
  const statementOf = (q: unknown): Statement | undefined => {
    const v = (q as { values?: unknown[] }).values;
    return v ? statements.get(v) : undefined;
  };
  const markAll = (q: unknown, step: 'wire' | 'ready'): void => {
    const s = statementOf(q);
    s?.ids.forEach((id) => mark(id, `${s.kind}_${step}`));
  };
  after(PG_QUERY_PROTO, 'submit', (q) => markAll(q, 'wire'));
  before(PG_QUERY_PROTO, 'handleReadyForQuery', (q) => markAll(q, 'ready'));

  return {
    begin() {
      open.clear();
      done.length = 0;
      counting = true;
      waits.start();
    },
    async report() {
      counting = false;
      const sampled = [...(await waits.stop())].sort((a, b) => b[1] - a[1]);
      const whole = (p: Purchase): number => p.marks.out! - p.marks.in!;
      const all = done.filter((p) => p.marks.out !== undefined && p.marks.in !== undefined).sort((a, b) => whole(a) - whole(b));
      open.clear();
      done.length = 0;
      // A row of other requests: nothing to say.
      if (all.length === 0) return undefined;
      const n = all.length;
      const groups: Array<[string, Purchase[]]> = [
        ['p45-p55', all.slice(Math.floor(n * 0.45), Math.max(Math.floor(n * 0.55), Math.floor(n * 0.45) + 1))],
        ['slowest 1 %', all.slice(Math.min(n - 1, Math.floor(n * 0.99)))],
      ];
      const median = (xs: number[]): number => percentile(xs.filter(Number.isFinite).sort((a, b) => a - b), 50);
      const lines = [`purchase trace (${fmt(n)} purchases; medians in ms; ${groups.map(([g, ps]) => `${g}: ${ps.length}`).join(', ')})`, `| segment | ${groups.map(([g]) => g).join(' | ')} |`, `|---|${groups.map(() => '---').join('|')}|`];
      const row = (label: string, f: (p: Purchase) => number, d = 2): void => void lines.push(`| ${label} | ${groups.map(([, ps]) => fmt(median(ps.map(f)), d)).join(' | ')} |`);
      for (let i = 1; i < ORDER.length; i++) {
        const [a, b] = [ORDER[i - 1]!, ORDER[i]!];
        row(`${a} → ${b}`, (p) => p.marks[b]! - p.marks[a]!);
      }
      row('in → out', whole);
      row('claim batch size', (p) => p.claimSize ?? NaN, 0);
      row('pool queue at claim', (p) => p.claimQueue ?? NaN, 0);
      row('write batch size', (p) => p.writeSize ?? NaN, 0);
      row('pool queue at write', (p) => p.writeQueue ?? NaN, 0);
      const share = (f: (p: Purchase) => boolean): string => groups.map(([, ps]) => `${fmt((100 * ps.filter(f).length) / ps.length)} %`).join(' | ');
      lines.push(`| claim sent more than once | ${share((p) => p.claims > 1)} |`, `| write sent more than once | ${share((p) => p.writes > 1)} |`);
      const total = sampled.reduce((a, [, c]) => a + c, 0);
      lines.push(`backends running a statement, sampled every ${SAMPLE_MS} ms (${fmt(total)} samples): ${sampled.map(([k, c]) => `${k} ${fmt((100 * c) / total, 1)} %`).join(', ')}`);
      return lines.join('\n');
    },
  };
}
