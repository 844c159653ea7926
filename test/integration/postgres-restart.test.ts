import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { openDb } from '../../storage/open.ts';
import type { Db } from '../../storage/db.ts';
import { NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { freePort } from '../helpers/free-port.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

/**
 * PostgreSQL crashed (`pg_ctl stop -m immediate`) and restarted under a running engine, on a
 * private cluster so the other suites keep theirs. Events sent over NATS while the database is
 * down are redelivered and applied once it is back; none is applied twice; timers still fire.
 */
const PG_BIN = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`).find((b) => existsSync(`${b}/initdb`)) : undefined;
const asPostgres = (args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'ignore' });
const canRun = realAvailable && PG_BIN !== undefined && process.getuid?.() === 0 && spawnSync('id', ['postgres']).status === 0;

describe.skipIf(!canRun)('PostgreSQL restarted under a running engine (private cluster + real NATS)', () => {
  let dir: string;
  // A port the kernel just handed out and freed: one picked at random may be held by another
  // suite's connection, and the cluster would not bind.
  let port: number;
  let db: Db;
  const pgctl = (...a: string[]) => asPostgres([`${PG_BIN!}/pg_ctl`, '-D', path.join(dir, 'data'), ...a]);
  const start = () => pgctl('-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-l', path.join(dir, 'log'), '-w', 'start');

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'anmpay-pg-'));
    await chown(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
    asPostgres([`${PG_BIN!}/initdb`, '-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'root']);
    // Taken by another socket between the look-up and the bind: another free port.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        start();
        break;
      } catch (err) {
        if (attempt === 3) throw err;
      }
    }
    db = await openDb({ databaseUrl: `postgres://root@127.0.0.1:${port}/postgres` });
  }, 60_000);

  afterAll(async () => {
    await db?.close().catch(() => undefined);
    try {
      pgctl('stop', '-m', 'immediate');
    } catch {
      /* already stopped */
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('applies every event exactly once after the database comes back', async () => {
    const bus = await NatsBus.connect({ url: NATS_URL, namespace: uniqueName('pgrs') });
    const engine = new Engine({ db, bus, registry: new MachineRegistry([orderDefinition]), ackWaitMs: 2_000, sweeper: { pollMs: 50 } });
    await engine.start();
    const T0 = Date.now();
    const target = { kind: 'order', id: 'o1', merchant: 'm', mode: 'test' as const };
    await engine.host.send(target, { type: 'order.create', id: 'create', at: T0, ttl_ms: 6_000 });
    for (let i = 0; i < 5; i++) await engine.host.send(target, { type: 'order.add', id: `before-${i}`, at: T0 + i, n: 1 });
    await waitFor(async () => (await db.query(`SELECT 1 FROM actor_events WHERE actor_id = 'o1'`)).rowCount === 6, 15_000, 'events before the crash');

    pgctl('stop', '-m', 'immediate');
    // Events keep arriving over the bus while the database is down: they must wait, not vanish.
    for (let i = 0; i < 5; i++) await engine.host.send(target, { type: 'order.add', id: `during-${i}`, at: T0 + 10 + i, n: 1 });
    await expect(engine.host.apply(target, { type: 'order.add', id: 'direct', at: T0 + 30, n: 1 })).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 1_000));
    start();

    await waitFor(async () => (await db.query(`SELECT 1 FROM actor_events WHERE actor_id = 'o1'`).catch(() => ({ rowCount: 0 }))).rowCount === 11, 60_000, 'events after the restart');
    const perEvent = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = 'o1' GROUP BY event_id`);
    expect(perEvent.rows).toHaveLength(11);
    expect(perEvent.rows.every((r) => r.n === 1)).toBe(true);
    // The expiry timer (6 s) still fires after the outage.
    await waitFor(async () => (await db.query<{ state: string }>(`SELECT state FROM actors WHERE id = 'o1'`)).rows[0]?.state === 'expired', 30_000, 'timer after the restart');
    await engine.stop();
    await bus.dispose();
    await bus.close();
  }, 120_000);
});
