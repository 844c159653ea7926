/**
 * `npm run bench:engine`: events applied through ActorHost with durable commit on real
 * PostgreSQL, as a ratio to a raw single-row insert loop measured in the same run; the same
 * on PGlite; the pure transition rate; RSS over a long run (BENCH_RSS_EVENTS, default 1,000,000).
 * Env: BENCH_EVENTS (default 30000), BENCH_CONCURRENCY (default 64).
 */
import os from 'node:os';
import pg from 'pg';
import { step, create } from '../../machines/kit/step.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { openDb } from '../../storage/open.ts';
import type { Db } from '../../storage/db.ts';
import { DATABASE_URL, uniqueName } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';
import { drive, fmt } from './stats.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 30_000);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 64);
const RSS_EVENTS = Number(process.env.BENCH_RSS_EVENTS ?? 1_000_000);
const ACTORS = 4_096;
const registry = new MachineRegistry([orderDefinition]);
const T0 = Date.now();
const target = (i: number) => ({ kind: 'order', id: `bench-${i % ACTORS}`, merchant: 'm_bench', mode: 'test' as const });

async function rawInserts(schema: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: CONC, options: `-c search_path=${schema}` });
  await pool.query('CREATE TABLE raw_bench (id bigserial PRIMARY KEY, actor text, body jsonb, at timestamptz DEFAULT now())');
  const r = await drive(EVENTS, CONC, (i) => pool.query('INSERT INTO raw_bench (actor, body) VALUES ($1, $2)', [`a${i}`, JSON.stringify({ i })]));
  await pool.end();
  console.log(`raw single-row inserts (${CONC} clients): ${fmt(r.rate)}/s  p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms`);
  return r.rate;
}

async function seed(host: ActorHost): Promise<void> {
  for (let i = 0; i < ACTORS; i += 256) {
    await Promise.all(
      Array.from({ length: Math.min(256, ACTORS - i) }, (_, k) =>
        host.apply(target(i + k), { type: 'order.create', id: 'create', at: T0, ttl_ms: 86_400_000 }),
      ),
    );
  }
}

async function engineRun(db: Db, events: number, conc: number, label: string, offset = 0) {
  const host = new ActorHost({ db, bus: new MemoryBus(), registry });
  if (offset === 0) await seed(host);
  const r = await drive(events, conc, (i) => host.apply(target(i), { type: 'order.add', id: `e${offset + i}`, at: T0 + i, n: 1 }));
  console.log(`${label}: ${fmt(r.rate)} events/s  p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms  (${fmt(r.ops)} events, ${conc} concurrent)`);
  return r;
}

function pureRate(): number {
  let snap = create(orderDefinition, { type: 'order.create', id: 'c', at: T0, ttl_ms: 1 } as never).snapshot;
  const n = 200_000;
  const t = performance.now();
  for (let i = 0; i < n; i++) snap = step(orderDefinition, snap, { type: 'order.add', id: `p${i}`, at: T0 + i, n: 1 } as never).snapshot;
  const rate = n / ((performance.now() - t) / 1000);
  console.log(`pure transition() (restore + transition + persist): ${fmt(rate)} events/s`);
  return rate;
}

console.log(`# bench:engine ${new Date().toISOString()} — ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}, node ${process.version}`);
pureRate();

const schema = uniqueName('bench');
const db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: CONC });
try {
  const raw = await rawInserts(schema);
  const eng = await engineRun(db, EVENTS, CONC, 'ActorHost on PostgreSQL (durable commit)');
  console.log(`ratio engine / raw inserts: ${fmt(eng.rate / raw, 2)}`);

  const lite = await openDb({ dataDir: 'memory' });
  await engineRun(lite, Math.min(EVENTS, 10_000), 8, 'ActorHost on PGlite (in memory)');
  await lite.close();

  if (RSS_EVENTS > 0) {
    const chunk = 50_000;
    const rss: number[] = [];
    const host = new ActorHost({ db, bus: new MemoryBus(), registry });
    for (let done = 0; done < RSS_EVENTS; done += chunk) {
      await drive(Math.min(chunk, RSS_EVENTS - done), CONC, (i) =>
        host.apply(target(done + i), { type: 'order.add', id: `m${done + i}`, at: T0 + done + i, n: 1 }),
      );
      if (global.gc) global.gc();
      rss.push(process.memoryUsage().rss / 2 ** 20);
      console.log(`  after ${fmt(done + chunk)} events: RSS ${fmt(rss.at(-1)!, 1)} MiB`);
    }
    console.log(`RSS over ${fmt(RSS_EVENTS)} events: first ${fmt(rss[0]!, 1)} MiB, max ${fmt(Math.max(...rss), 1)} MiB, last ${fmt(rss.at(-1)!, 1)} MiB`);
  }
} finally {
  await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
  await db.close();
}
