import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { openDb } from '../../storage/open.ts';
import { openReal, realAvailable, waitFor } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

// Real time: the runtime's sweeper uses the wall clock, and these timers must not come due.
const T0 = Date.now();
const target = { kind: 'order', id: 'k1', merchant: 'm_1', mode: 'test' as const };
const events = [
  { type: 'order.create', id: 'create', at: T0, ttl_ms: 3_600_000 },
  ...Array.from({ length: 20 }, (_, i) => ({ type: 'order.add', id: `add-${i}`, at: T0 + i + 1, n: i })),
];

interface Child {
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout: () => string;
  kill: (sig: NodeJS.Signals) => void;
}

// Children still running when a test ends (failed or timed out) are killed, never leaked.
const running = new Set<ChildProcess>();
afterEach(() => {
  for (const p of running) p.kill('SIGKILL');
  running.clear();
});

function child(env: Record<string, string>): Child {
  const p = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/engine-child.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  running.add(p);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    p.on('exit', (code, signal) => {
      running.delete(p);
      if (code && code !== 0) console.error(err);
      resolve({ code, signal });
    }),
  );
  return { exit, stdout: () => out, kill: (s) => p.kill(s) };
}

describe.skipIf(!realAvailable)('process killed between commit and ack (PostgreSQL + NATS)', () => {
  it('loses nothing and repeats no effect after restart', async () => {
    const b = await openReal();
    try {
      const host = new ActorHost({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]) });
      const received: string[] = [];
      const sub = await b.bus.consume({
        durable: 'probe',
        subject: 'fx.webhook.>',
        handler: async (m) => {
          received.push(m.msgId ?? '');
          m.ack();
        },
      });
      for (const e of events) await host.send(target, e);
      const env = { BACKEND: 'real', SCHEMA: b.schema!, NAMESPACE: b.namespace!, HOLD: '1' };
      const first = child({ ...env, KILL_AT: 'add-7' });
      expect((await first.exit).signal).toBe('SIGKILL');
      const committed = await b.db.query(`SELECT 1 FROM actor_events WHERE actor_id = 'k1' AND event_id = 'add-7'`);
      expect(committed.rowCount).toBe(1);

      const second = child(env);
      await waitFor(async () => (await b.db.query(`SELECT 1 FROM actor_events WHERE actor_id = 'k1'`)).rowCount === events.length, 30_000, 'all events applied');
      await waitFor(async () => received.length >= events.length, 15_000, 'webhooks');
      await new Promise((r) => setTimeout(r, 1_500)); // room for any wrongly repeated delivery to show up
      second.kill('SIGTERM');
      await second.exit;
      await sub.stop();

      const perEvent = await b.db.query<{ event_id: string; n: number }>(`SELECT event_id, count(*)::int AS n FROM actor_events WHERE actor_id = 'k1' GROUP BY event_id`);
      expect(perEvent.rows).toHaveLength(events.length);
      expect(perEvent.rows.every((r) => r.n === 1)).toBe(true);
      const outbox = await b.db.query(`SELECT 1 FROM outbox WHERE actor_id = 'k1' AND subject LIKE 'fx.webhook.%'`);
      expect(outbox.rowCount).toBe(events.length);
      expect(received).toHaveLength(events.length);
      expect(new Set(received).size).toBe(events.length);
      const st = await b.db.query<{ version: number }>(`SELECT version FROM actors WHERE id = 'k1'`);
      expect(st.rows[0]!.version).toBe(events.length);
    } finally {
      await b.close();
    }
  }, 90_000);

  it('timers fire after a restart', async () => {
    const b = await openReal();
    try {
      const host = new ActorHost({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]) });
      await host.apply({ ...target, id: 'tr' }, { type: 'order.create', id: 'c', at: Date.now(), ttl_ms: 1_500 });
      // Nothing runs while the timer comes due; a fresh runtime process must still fire it.
      await new Promise((r) => setTimeout(r, 1_600));
      const env = { BACKEND: 'real', SCHEMA: b.schema!, NAMESPACE: b.namespace!, HOLD: '1' };
      const proc = child(env);
      await waitFor(async () => (await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = 'tr'`)).rows[0]?.state === 'expired', 20_000, 'expiry after restart');
      proc.kill('SIGTERM');
      await proc.exit;
    } finally {
      await b.close();
    }
  }, 60_000);
});

describe('process killed between commit and ack (PGlite + in-process bus)', () => {
  it('loses nothing and repeats no effect after restart', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'anmpay-kill-'));
    try {
      const list = JSON.stringify(events.map((event) => ({ target, event })));
      const first = child({ BACKEND: 'embedded', PGLITE_DIR: dir, EVENTS: list, KILL_AT: 'add-7' });
      expect((await first.exit).signal).toBe('SIGKILL');
      // The client retries everything it did not see acknowledged; the store dedupes.
      const second = child({ BACKEND: 'embedded', PGLITE_DIR: dir, EVENTS: list });
      expect((await second.exit).code).toBe(0);
      const report = JSON.parse(second.stdout().split('\n')[0]!) as { outcomes: Record<string, number> };
      expect(report.outcomes).toEqual({ duplicate: 9, applied: 12 });
      const db = await openDb({ dataDir: dir });
      const perEvent = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = 'k1' GROUP BY event_id`);
      expect(perEvent.rows).toHaveLength(events.length);
      expect(perEvent.rows.every((r) => r.n === 1)).toBe(true);
      const pending = await db.query(`SELECT 1 FROM outbox WHERE published_at IS NULL`);
      expect(pending.rowCount).toBe(0);
      const all = await db.query(`SELECT 1 FROM outbox WHERE actor_id = 'k1'`);
      expect(all.rowCount).toBe(events.length);
      await db.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
