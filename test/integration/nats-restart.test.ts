import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { openDb } from '../../storage/open.ts';
import type { Db } from '../../storage/db.ts';
import { DATABASE_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { freePort } from '../helpers/free-port.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

/**
 * NATS restarted under a running engine: a private nats-server (so other suites keep theirs)
 * is SIGKILLed while events keep coming, then started again on the same store. Nothing is
 * lost: outbox rows written meanwhile are published after the reconnect, events sent after it
 * are consumed, and nothing is applied twice.
 */
const NATS_BIN = '/usr/sbin/nats-server';

describe.skipIf(!realAvailable || !existsSync(NATS_BIN))('NATS restarted under a running engine (real PostgreSQL + private nats-server)', () => {
  let dir: string;
  let port: number;
  let nats: ChildProcess | undefined;
  let db: Db;
  const schema = uniqueName('natsrs');

  const startNats = async (): Promise<void> => {
    nats = spawn(NATS_BIN, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    await waitFor(async () => new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(true)); // port taken: the server is listening
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)));
    }), 10_000, 'nats-server to listen');
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'anmpay-nats-'));
    port = await freePort();
    await startNats();
    db = await openDb({ databaseUrl: DATABASE_URL, schema });
  });

  afterAll(async () => {
    nats?.kill('SIGKILL');
    await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('loses nothing across a SIGKILL and restart of the server', async () => {
    const bus = await NatsBus.connect({ url: `nats://127.0.0.1:${port}`, namespace: 'rs' });
    const engine = new Engine({ db, bus, registry: new MachineRegistry([orderDefinition]), ackWaitMs: 2_000 });
    await engine.start();
    const published: string[] = [];
    const probe = await bus.consume({ durable: 'probe', subject: 'fx.webhook.>', handler: async (m) => { published.push(m.msgId ?? ''); m.ack(); } });
    const T0 = Date.now();
    const target = { kind: 'order', id: 'o1', merchant: 'm', mode: 'test' as const };
    await engine.host.send(target, { type: 'order.create', id: 'create', at: T0, ttl_ms: 3_600_000 });
    for (let i = 0; i < 5; i++) await engine.host.send(target, { type: 'order.add', id: `before-${i}`, at: T0 + i, n: 1 });
    await waitFor(async () => (await db.query(`SELECT 1 FROM actor_events WHERE actor_id = 'o1'`)).rowCount === 6, 15_000, 'events before the restart');

    nats!.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    // While NATS is down the gateway path still commits; the outbox holds the effects.
    for (let i = 0; i < 5; i++) await engine.host.apply(target, { type: 'order.add', id: `during-${i}`, at: T0 + 10 + i, n: 1 });
    const pendingDuring = await db.query(`SELECT 1 FROM outbox WHERE published_at IS NULL`);
    expect(pendingDuring.rowCount).toBeGreaterThan(0);

    await startNats();
    for (let i = 0; i < 5; i++) {
      await waitFor(async () => engine.host.send(target, { type: 'order.add', id: `after-${i}`, at: T0 + 20 + i, n: 1 }).then(() => true, () => false), 20_000, 'publish after restart');
    }
    await waitFor(async () => (await db.query(`SELECT 1 FROM actor_events WHERE actor_id = 'o1'`)).rowCount === 16, 30_000, 'events after the restart');
    await waitFor(async () => (await db.query(`SELECT 1 FROM outbox WHERE published_at IS NULL`)).rowCount === 0, 30_000, 'outbox drained');
    await waitFor(async () => new Set(published).size >= 16, 30_000, 'every webhook effect published');
    const perEvent = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = 'o1' GROUP BY event_id`);
    expect(perEvent.rows.every((r) => r.n === 1)).toBe(true);
    expect(new Set(published).size).toBe(16);
    await probe.stop();
    await engine.stop();
    await bus.close();
  }, 120_000);
});
