/**
 * `npm run bench:webhooks` (issue 5): signed webhook deliveries to a local receiver (a separate
 * process, so it does not share this event loop) on real PostgreSQL + NATS JetStream, with the
 * whole durable log: event row, delivery row, claim, attempt row and status update each.
 *   1. end to end: facts published on `fx.webhook.test` as the outbox relay does, then the
 *      runtime started: intake → worker → HTTP 200, timed until the last result is committed;
 *   2. delivery stage alone: a backlog of pending deliveries drained by the worker;
 *   3. memory: 100,000 pending deliveries queued (BENCH_BACKLOG), RSS sampled while they drain.
 * Figures are printed; docs/benchmarks.md keeps the current ones.
 * Env: BENCH_EVENTS (default 20000), BENCH_MERCHANTS (default 20), BENCH_BACKLOG (default 100000).
 */
import './bench-env.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { webhookEventId } from '../../runtime/engine/webhook-id.ts';
import { setEndpoint } from '../../runtime/webhooks/endpoints.ts';
import { WebhookIntake, factToRow, type WebhookFact } from '../../runtime/webhooks/intake.ts';
import { WebhookRuntime } from '../../runtime/webhooks/service.ts';
import { DeliveryWorker } from '../../runtime/webhooks/worker.ts';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL, uniqueName } from '../helpers/backends.ts';
import { fmt } from './stats.ts';
import { natsServerPid, procCpu } from './proc-cpu.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const MERCHANTS = Number(process.env.BENCH_MERCHANTS ?? 20);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 100_000);
const say = (s: string): void => {
  console.log(s);
};
const mib = (n: number): string => fmt(n / 2 ** 20, 1);

// The receiver: answers 200 at once, checks every 50th signature with node:crypto, counts.
const RECEIVER = `
const http = require('node:http');
const { createHmac, timingSafeEqual } = require('node:crypto');
const secrets = JSON.parse(process.env.SECRETS);
let n = 0, checked = 0, bad = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    n++;
    if (n % 50 === 0) {
      checked++;
      const secret = secrets[req.url];
      const ts = req.headers['service-timestamp'], id = req.headers['service-event-id'];
      const want = createHmac('sha256', secret).update('v1:' + ts + ':' + id + ':').update(Buffer.concat(chunks)).digest();
      const ok = String(req.headers['service-signature']).split(',').some((e) => e.startsWith('v1=') && timingSafeEqual(Buffer.from(e.slice(3), 'hex'), want));
      if (!ok || Math.abs(Date.now() / 1000 - Number(ts)) > 300) bad++;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => { if (m === 'stats') process.send({ n, checked, bad }); });
`;

interface Receiver {
  proc: ChildProcess;
  port: number;
  stats(): Promise<{ n: number; checked: number; bad: number }>;
}

async function startReceiver(secretsByPath: Record<string, string>): Promise<Receiver> {
  const proc = spawn(process.execPath, ['-e', RECEIVER], { env: { ...process.env, SECRETS: JSON.stringify(secretsByPath) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => proc.once('message', (m: { port: number }) => resolve(m.port)));
  return {
    proc,
    port,
    stats: () =>
      new Promise((resolve) => {
        proc.once('message', (m) => resolve(m as { n: number; checked: number; bad: number }));
        proc.send('stats');
      }),
  };
}

async function count(db: Db, status: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = $1`, [status]);
  return rows[0]!.n;
}

async function until(db: Db, status: string, n: number, onTick?: () => void): Promise<void> {
  while ((await count(db, status)) < n) {
    onTick?.();
    await new Promise((r) => setTimeout(r, 100));
  }
}

function fact(i: number, prefix: string): WebhookFact {
  const merchant = `m_${i % MERCHANTS}`;
  const data = { id: `pay_${prefix}${i}`, status: 'PAID', mode: 'test', currency: 'ANM', merchant_order_id: `order-${i}`, amount_nanm: '1000000000', merchant_amount: '980000000', protocol_fee: '20000000', protocol_fee_bps: 200, payment_reference: 'pr1:abcdefghijklmnopqrstuvwxyz234567', transaction_hash: 'ab'.repeat(32), block_height: 1234, confirmations: 12, required_confirmations: 12, reason: null, metadata: { order: i } };
  return { merchant, mode: 'test', actor_id: `pay_${prefix}${i}`, kind: 'payment_intent', event: { id: webhookEventId(merchant, 'payment.confirmed', data), type: 'payment.confirmed', created: Math.floor(Date.now() / 1000), data } };
}

/**
 * CPU seconds used by every process doing the work: this one, its PostgreSQL backends (found
 * by application_name), the receiver and nats-server, read from /proc. Wall-clock rates on a
 * machine shared with other work swing with their load; CPU per delivery does not, and gives
 * the rate two dedicated cores would sustain.
 */
const APP = uniqueName('anmpay_bench');
process.env.PGAPPNAME = APP;
const natsPid = natsServerPid();

class CpuMeter {
  private readonly start = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly db: Db,
    private readonly receiverPid: () => number | undefined,
  ) {}
  private async pgPids(): Promise<number[]> {
    const { rows } = await this.db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP]);
    return rows.map((r) => r.pid);
  }
  private async sample(): Promise<void> {
    const pids: Array<[string, number | undefined]> = [['node', process.pid], ['receiver', this.receiverPid()], ['nats', natsPid], ...(await this.pgPids()).map((p) => [`pg:${p}`, p] as [string, number])];
    for (const [k, pid] of pids) {
      if (pid === undefined) continue;
      const v = k === 'node' ? (process.cpuUsage().user + process.cpuUsage().system) / 1e6 : procCpu(pid);
      if (!this.start.has(k)) this.start.set(k, v);
      this.last.set(k, v);
    }
  }
  async begin(): Promise<void> {
    this.start.clear();
    this.last.clear();
    await this.sample();
    // Pool connections come and go: keep sampling so every backend is counted.
    this.timer = setInterval(() => void this.sample().catch(() => undefined), 200);
  }
  async end(): Promise<{ node: number; pg: number; receiver: number; nats: number }> {
    clearInterval(this.timer);
    await this.sample();
    const used = (pred: (k: string) => boolean) => [...this.last].filter(([k]) => pred(k)).reduce((a, [k, v]) => a + v - (this.start.get(k) ?? v), 0);
    return { node: used((k) => k === 'node'), pg: used((k) => k.startsWith('pg:')), receiver: used((k) => k === 'receiver'), nats: used((k) => k === 'nats') };
  }
}

function cpuLine(n: number, c: { node: number; pg: number; receiver: number; nats: number }, withNats: boolean): string {
  const us = (x: number) => fmt((x / n) * 1e6);
  const service = c.node + c.pg + (withNats ? c.nats : 0);
  return (
    `CPU per delivery: runtime ${us(c.node)} µs + PostgreSQL backends ${us(c.pg)} µs${withNats ? ` + nats-server ${us(c.nats)} µs` : ''} = ${us(service)} µs ` +
    `(receiver ${us(c.receiver)} µs) → two dedicated cores sustain ≈ **${fmt((2 * n) / service)} deliveries/s** for the service, ≈ ${fmt((2 * n) / (service + c.receiver))}/s with the receiver on the same cores`
  );
}

const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? 'unknown'}), node ${process.version}`;
say(`bench:webhooks ${new Date().toISOString()} — ${machine}; PostgreSQL ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')}, NATS ${NATS_URL}`);

if (global.gc) global.gc();
const baselineRss = process.memoryUsage().rss;
const schema = uniqueName('bench');
const namespace = uniqueName('bench');
const db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 16 });
const bus = await NatsBus.connect({ url: NATS_URL, namespace });
let rx: Receiver | undefined;
try {
  const secrets: Record<string, string> = {};
  const paths: string[] = [];
  for (let m = 0; m < MERCHANTS; m++) paths.push(`/m/${m}`);
  // Endpoints first with a placeholder port, then the receiver learns the secrets, then the real URL.
  const created = await Promise.all(paths.map((p, m) => setEndpoint(db, { merchant: `m_${m}`, mode: 'test', url: `http://127.0.0.1:1${p}` }, { allowPrivate: true })));
  created.forEach((c, m) => (secrets[paths[m]!] = c.secret!));
  rx = await startReceiver(secrets);
  for (let m = 0; m < MERCHANTS; m++) await setEndpoint(db, { merchant: `m_${m}`, mode: 'test', url: `http://127.0.0.1:${rx.port}${paths[m]}` }, { allowPrivate: true });

  // 1. End to end through NATS: the facts are in JetStream (as the outbox relay leaves them),
  // then the runtime starts; timed until the last delivery's result is committed.
  {
    const tp = performance.now();
    const facts = Array.from({ length: EVENTS }, (_, i) => fact(i, 'e'));
    for (let i = 0; i < facts.length; i += 500) {
      await Promise.all(facts.slice(i, i + 500).map((f, k) => bus.publish('fx.webhook.test', f, { msgId: `e:${i + k}` })));
    }
    const publishS = (performance.now() - tp) / 1000;
    const rt = new WebhookRuntime(db, bus, { allowPrivate: true, worker: { pollMs: 100 } });
    const meter = new CpuMeter(db, () => rx?.proc.pid);
    await meter.begin();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await rt.start();
    let intaken = 0;
    await until(db, 'succeeded', EVENTS, () => {
      if (!intaken && rt.intake.stats.events >= EVENTS) intaken = performance.now();
    });
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    say(
      `end to end (JetStream → intake → signed POST → attempt logged), ${fmt(EVENTS)} events over ${MERCHANTS} endpoints: ` +
        `**${fmt(EVENTS / s)} deliveries/s** (${fmt(s, 2)} s, all recorded by the intake after ${fmt((intaken - t0) / 1000, 2)} s; runtime process CPU ${fmt(((cpu.user + cpu.system) / 1e6 / s) * 100)}% of a core; ` +
        `publishing the ${fmt(EVENTS)} facts to JetStream beforehand took ${fmt(publishS, 2)} s)`,
    );
    say(`  ${cpuLine(EVENTS, await meter.end(), true)}`);
    await rt.stop();
  }

  // 2. Delivery stage alone, and 3. memory with a large backlog.
  for (const [phase, label, n] of [
    ['s', 'delivery stage (backlog of pending deliveries drained)', EVENTS],
    ['m', `memory: ${fmt(BACKLOG)} pending deliveries queued, then drained`, BACKLOG],
  ] as const) {
    const intake = new WebhookIntake(db, bus);
    const before = await count(db, 'succeeded');
    for (let i = 0; i < n; i += 1000) {
      await intake.record(Array.from({ length: Math.min(1000, n - i) }, (_, k) => factToRow(fact(i + k, phase))!));
    }
    if (global.gc) global.gc();
    const queuedRss = process.memoryUsage().rss;
    const pending = await count(db, 'pending');
    const worker = new DeliveryWorker(db, { allowPrivate: true, pollMs: 100 });
    let peakRss = queuedRss;
    let peakHeap = process.memoryUsage().heapUsed;
    const sample = (): void => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    };
    const timer = setInterval(sample, 250);
    const meter = new CpuMeter(db, () => rx?.proc.pid);
    await meter.begin();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    worker.start();
    // RSS at each quarter of the drain: flat means memory does not follow the backlog.
    const quarters: string[] = [];
    await until(db, 'succeeded', before + n, () => {
      sample();
      const done = worker.stats.succeeded;
      if (done >= ((quarters.length + 1) * n) / 4 && quarters.length < 3) quarters.push(mib(process.memoryUsage().rss));
    });
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const used = await meter.end();
    clearInterval(timer);
    await worker.stop();
    say(
      `${label}: ${fmt(pending)} pending → **${fmt(n / s)} deliveries/s** (${fmt(s, 2)} s, worker process CPU ${fmt(((cpu.user + cpu.system) / 1e6 / s) * 100)}% of a core); ` +
        `RSS at start ${mib(baselineRss)} MiB, with the backlog queued ${mib(queuedRss)} MiB, at 25/50/75 % drained ${quarters.join(' / ')} MiB, peak ${mib(peakRss)} MiB (heap peak ${mib(peakHeap)} MiB)`,
    );
    say(`  ${cpuLine(n, used, false)}`);
  }
  const st = await rx.stats();
  const attempts = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_attempts`);
  say(`receiver got ${fmt(st.n)} requests; signature checked on ${fmt(st.checked)} of them by the receiver, ${st.bad} bad; ${fmt(attempts.rows[0]!.n)} attempt rows logged`);
} finally {
  rx?.proc.kill('SIGTERM');
  await bus.dispose().catch(() => undefined);
  await bus.close();
  await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
  await db.close();
}

