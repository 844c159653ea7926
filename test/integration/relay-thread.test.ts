import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { connect } from 'nats';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OutboxRelay } from '../../runtime/engine/outbox-relay.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { RelayThread } from '../../runtime/engine/relay-thread.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { registry as metrics } from '../../runtime/ops/metrics.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';
import { DATABASE_URL, NATS_URL, openEmbedded, openReal, realAvailable, waitFor, type Backend } from '../helpers/backends.ts';

/**
 * The outbox relay on a worker thread (runtime/engine/relay-thread.ts, ADR 0105): what actor
 * steps commit leaves from the thread, nudges cross to it at most once a turn, a stop leaves
 * nothing running, and a thread that dies hands its rows to the inline relay, each published
 * once. Real backends only: the thread reaches them over its own connections.
 */
describe.runIf(realAvailable)('outbox relay on a thread (real PostgreSQL + NATS)', () => {
  let b: Backend;
  let engine: Engine | undefined;
  beforeEach(async () => {
    b = await openReal();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await engine?.stop();
    engine = undefined;
    await b.close();
  });

  const open = (log?: (line: string) => void): Engine =>
    (engine = new Engine({
      db: b.db,
      bus: b.bus,
      registry: new MachineRegistry([orderDefinition]),
      relayThread: { databaseUrl: DATABASE_URL, schema: b.schema, natsUrl: NATS_URL, namespace: b.namespace!, ...(log && { log }) },
    }));
  const relayOf = (e: Engine): RelayThread => {
    expect(e.relay).toBeInstanceOf(RelayThread);
    return e.relay as RelayThread;
  };
  const target = { kind: 'order', id: 'o1', merchant: 'm', mode: 'test' as const };
  const published = async (): Promise<number> => Number((await metrics.getSingleMetric('anm_outbox_published_total')!.get()).values[0]?.value ?? 0);
  const pending = async (): Promise<number> => (await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`)).rows[0]!.n;
  /** Messages the effects stream holds: a row published twice would be two, but for the dedupe by message id. */
  const streamed = async (): Promise<number> => {
    const nc = await connect({ servers: NATS_URL });
    try {
      return (await (await nc.jetstreamManager()).streams.info(`${b.namespace!}_EFFECTS`)).state.messages;
    } finally {
      await nc.close();
    }
  };

  it("publishes from the thread what actor steps commit, and counts the batches in this thread's metrics", async () => {
    const e = open();
    const onMain = vi.spyOn(b.bus, 'publish');
    await e.start({ feed: false, consumer: false, sweeper: false });
    expect(relayOf(e).thread).not.toBeNull();
    const before = await published();
    const seen = new Set<string>();
    const probe = await b.bus.consume({ durable: 'probe', subject: 'fx.webhook.>', handler: async (m) => void (seen.add(m.msgId ?? ''), m.ack()) });
    await e.host.apply(target, { type: 'order.create', id: 'create', at: Date.now(), ttl_ms: 3_600_000 });
    for (let i = 0; i < 9; i++) await e.host.apply(target, { type: 'order.add', id: `add-${i}`, at: Date.now(), n: 1 });
    await waitFor(async () => seen.size === 10, 20_000, 'ten webhook effects consumed');
    await waitFor(async () => (await published()) - before === 10, 10_000, 'the batches counted here');
    await probe.stop();
    expect(onMain).not.toHaveBeenCalled();
    expect(relayOf(e).thread).not.toBeNull();
  });

  it('sends the nudges of one turn to the thread as one message', async () => {
    const e = open();
    await e.start({ feed: false, consumer: false, sweeper: false });
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    const nudges = (): number => posted.mock.calls.filter(([m]) => m === 'nudge').length;
    for (let i = 0; i < 100; i++) e.relay.nudge();
    expect(nudges()).toBe(1);
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 100; i++) e.relay.nudge();
    expect(nudges()).toBe(2);
  });

  it("answers drainOnce with the thread's count", async () => {
    // No poll for a minute after the first: once that one is over, only the asked drain claims the row.
    const batches: number[] = [];
    const config = { databaseUrl: DATABASE_URL, schema: b.schema, natsUrl: NATS_URL, namespace: b.namespace! };
    const relay = new RelayThread(config, () => new OutboxRelay(b.db, b.bus), { pollMs: 60_000, onBatch: (rows) => batches.push(rows) });
    await relay.start();
    try {
      await waitFor(async () => batches.length > 0, 10_000, 'the first claim');
      await b.db.query(`INSERT INTO outbox (actor_id, msg_id, subject, payload) VALUES ('o1', 'direct', 'fx.webhook.test', '{}'::jsonb)`);
      expect(await relay.drainOnce()).toBe(1);
      expect(await relay.drainOnce()).toBe(0);
      expect(relay.thread).not.toBeNull();
    } finally {
      await relay.stop();
    }
  });

  it('leaves no thread after stop, and a script that used one ends by itself', async () => {
    const e = open();
    await e.start({ feed: false, consumer: false, sweeper: false });
    const thread = relayOf(e).thread!;
    const exited = new Promise<number>((resolve) => thread.once('exit', resolve));
    await e.stop();
    engine = undefined;
    await exited;
    expect(relayOf(e).thread).toBeNull();

    // Under `node --import tsx` (as `npm start` runs) rather than vitest: a relayed row, a stop, then no process.exit.
    const script = `
      import { Engine } from './runtime/engine/runtime.ts';
      import { MachineRegistry } from './runtime/engine/registry.ts';
      import { NatsBus } from './runtime/bus/nats-bus.ts';
      import { openDb } from './storage/open.ts';
      import { orderDefinition } from './test/fixtures/order-machine.ts';
      const db = await openDb({ databaseUrl: ${JSON.stringify(DATABASE_URL)}, schema: ${JSON.stringify(b.schema)} });
      const bus = await NatsBus.connect({ url: ${JSON.stringify(NATS_URL)}, namespace: ${JSON.stringify(b.namespace)} });
      const engine = new Engine({ db, bus, registry: new MachineRegistry([orderDefinition]),
        relayThread: { databaseUrl: ${JSON.stringify(DATABASE_URL)}, schema: ${JSON.stringify(b.schema)}, natsUrl: ${JSON.stringify(NATS_URL)}, namespace: bus.namespace } });
      await engine.start({ feed: false, consumer: false, sweeper: false });
      await engine.host.apply({ kind: 'order', id: 'child', merchant: 'm', mode: 'test' }, { type: 'order.create', id: 'c', at: Date.now(), ttl_ms: 60000 });
      while ((await db.query("SELECT 1 FROM outbox WHERE published_at IS NULL")).rowCount > 0) await new Promise((r) => setTimeout(r, 20));
      console.log(engine.relay.thread ? 'relayed on the thread' : 'relayed inline');
      await engine.stop();
      await bus.close();
      await db.close();`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => (child.kill('SIGKILL'), resolve(null)), 30_000);
      child.once('exit', (c) => (clearTimeout(t), resolve(c)));
    });
    expect(out.trim()).toBe('relayed on the thread');
    expect(code).toBe(0);
  });

  it('falls back to the inline relay when the thread dies, and every row reaches the bus once', async () => {
    const lines: string[] = [];
    const e = open((l) => lines.push(l));
    await e.start({ feed: false, consumer: false, sweeper: false });
    const relay = relayOf(e);
    const rows = 6000;
    await b.db.query(`INSERT INTO outbox (actor_id, msg_id, subject, payload) SELECT 'o1', 'bulk-' || i, 'fx.webhook.test', '{}'::jsonb FROM generate_series(1, $1::int) i`, [rows]);
    e.relay.nudge();
    // Killed while it relays: a batch may be published and not yet marked, and is then published again.
    await waitFor(async () => (await pending()) < rows, 20_000, 'a first batch from the thread');
    await relay.thread!.terminate();
    expect(relay.thread).toBeNull();
    await e.host.apply(target, { type: 'order.create', id: 'after', at: Date.now(), ttl_ms: 3_600_000 });
    await waitFor(async () => (await pending()) === 0, 30_000, 'the outbox relayed inline');
    expect(await streamed()).toBe(rows + 1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/relaying on the main thread/);
    expect(await e.relay.drainOnce()).toBe(0);
  });

  it('relays inline when the thread cannot reach the backends', async () => {
    const lines: string[] = [];
    const config = { databaseUrl: 'postgres://root@127.0.0.1:1/test', schema: b.schema, natsUrl: NATS_URL, namespace: b.namespace!, log: (l: string) => void lines.push(l) };
    const relay = new RelayThread(config, () => new OutboxRelay(b.db, b.bus));
    await relay.start();
    try {
      expect(relay.thread).toBeNull();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/failed \(.*ECONNREFUSED.*\); relaying on the main thread/);
      await b.db.query(`INSERT INTO outbox (actor_id, msg_id, subject, payload) VALUES ('o1', 'inline', 'fx.webhook.test', '{}'::jsonb)`);
      relay.nudge();
      await waitFor(async () => (await pending()) === 0, 10_000, 'the row relayed inline');
    } finally {
      await relay.stop();
    }
  });
});

describe('outbox relay with the embedded backends', () => {
  it('stays on the main thread: no other thread could reach PGlite or the in-process bus', async () => {
    const b = await openEmbedded();
    const config = { databaseUrl: DATABASE_URL, natsUrl: NATS_URL, namespace: 'unused' };
    const e = new Engine({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]), relayThread: config });
    expect(e.relay).toBeInstanceOf(OutboxRelay);
    await b.close();
  });
});
