import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { webhookEventId } from '../../runtime/engine/webhook-id.ts';
import { setEndpoint } from '../../runtime/webhooks/endpoints.ts';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { openReal, realAvailable, waitFor } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';
import { verifyIndependently } from './independent-verifier.ts';
import { Receiver } from './receiver.ts';

/**
 * The runtime killed (SIGKILL, in a child process) while a delivery is on the wire: nothing
 * is lost, and the delivery that was cut off is sent again with the same event id and body.
 */
const T0 = Date.now();
const target = { kind: 'order', id: 'k1', merchant: 'm_k', mode: 'test' as const };
const adds = Array.from({ length: 19 }, (_, i) => ({ type: 'order.add', id: `add-${i + 1}`, at: T0 + i + 1, n: i + 1 }));
const events = [{ type: 'order.create', id: 'create', at: T0, ttl_ms: 3_600_000 }, ...adds];
const expectedIds = (() => {
  let total = 0;
  return [
    webhookEventId('m_k', 'order.created', { id: 'create' }),
    ...adds.map((e) => {
      total += e.n;
      return webhookEventId('m_k', 'order.added', { n: e.n, total });
    }),
  ];
})();

interface Child {
  pid: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  ready: Promise<void>;
  kill: (sig: NodeJS.Signals) => void;
}

function child(env: Record<string, string>): Child {
  const p = spawn(process.execPath, ['--import', 'tsx', 'test/webhooks/webhook-child.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ready = new Promise<void>((resolve) => p.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    p.on('exit', (code, signal) => {
      if (code) console.error(err);
      resolve({ code, signal });
    }),
  );
  return { pid: p.pid!, exit, ready, kill: (s) => p.kill(s) };
}

/** Answers 200, except the 8th request: it kills the runtime that sent it, mid-request. */
function killOnEighth(rx: Receiver, victim: () => Child | undefined): { killedEventId: () => string | undefined } {
  let killed: string | undefined;
  rx.reply = (r, nth) => {
    if (nth === 8 && !killed) {
      killed = r.eventId;
      victim()?.kill('SIGKILL');
      return 'hang';
    }
    return 200;
  };
  return { killedEventId: () => killed };
}

async function checkDelivered(rx: Receiver, secret: string, killed: string | undefined): Promise<void> {
  expect(killed).toBeDefined();
  // Nothing lost: every fact arrived, with the id it was given when it happened.
  expect(new Set(rx.ids())).toEqual(new Set(expectedIds));
  // The cut-off delivery came again: same event id, same bytes.
  const copies = rx.received.filter((r) => r.eventId === killed);
  expect(copies.length).toBeGreaterThanOrEqual(2);
  expect(new Set(copies.map((c) => c.rawBody.toString())).size).toBe(1);
  for (const r of rx.received) {
    expect(verifyIndependently({ rawBody: r.rawBody, headers: r.headers, secret, nowSeconds: Math.floor(Date.now() / 1000) })).toMatchObject({ ok: true });
  }
}

async function checkLog(db: Db, killed: string): Promise<void> {
  const st = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`);
  expect(st.rows).toEqual([{ status: 'succeeded', n: 20 }]);
  // The attempt that died with its process is in the log too.
  const { rows } = await db.query<{ attempt: number; status: number | null; error: string | null }>(
    `SELECT a.attempt, a.status, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.event_id = $1 ORDER BY a.attempt`,
    [killed],
  );
  expect(rows.at(-1)).toMatchObject({ status: 200 });
  expect(rows[0]).toMatchObject({ attempt: 1, status: null });
  expect(rows[0]!.error).toMatch(/no result recorded/);
  expect(rows.map((r) => r.attempt)).toEqual(rows.map((_r, i) => i + 1));
}

describe.skipIf(!realAvailable)('runtime killed mid-delivery (PostgreSQL + NATS)', () => {
  it('loses nothing; the interrupted delivery is repeated with the same event id', async () => {
    const b = await openReal();
    const rx = await Receiver.start();
    let current: Child | undefined;
    const kill = killOnEighth(rx, () => current);
    try {
      const ep = await setEndpoint(b.db, { merchant: 'm_k', mode: 'test', url: rx.url }, { allowPrivate: true });
      // The facts are committed to the outbox before any runtime runs; the child relays them.
      const host = new ActorHost({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]) });
      for (const e of events) await host.apply(target, e);
      const env = { BACKEND: 'real', SCHEMA: b.schema!, NAMESPACE: b.namespace! };
      current = child(env);
      expect((await current.exit).signal).toBe('SIGKILL');
      expect(rx.received.length).toBeLessThan(20 + 1);

      current = child(env);
      await waitFor(async () => (await b.db.query(`SELECT 1 FROM webhook_deliveries WHERE status = 'succeeded'`)).rowCount === 20, 30_000, 'all delivered');
      await new Promise((r) => setTimeout(r, 500));
      current.kill('SIGTERM');
      await current.exit;
      await checkDelivered(rx, ep.secret!, kill.killedEventId());
      await checkLog(b.db, kill.killedEventId()!);
    } finally {
      current?.kill('SIGKILL');
      rx.release();
      await rx.close();
      await b.close();
    }
  }, 90_000);
});

describe('runtime killed mid-delivery (PGlite + in-process bus)', () => {
  it('loses nothing; the interrupted delivery is repeated with the same event id', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'anmpay-wh-kill-'));
    const rx = await Receiver.start();
    let current: Child | undefined;
    const kill = killOnEighth(rx, () => current);
    try {
      const setup = await openDb({ dataDir: dir });
      const ep = await setEndpoint(setup, { merchant: 'm_k', mode: 'test', url: rx.url }, { allowPrivate: true });
      await setup.close();
      const env = { BACKEND: 'embedded', PGLITE_DIR: dir, EVENTS: JSON.stringify(events.map((event) => ({ target, event }))) };
      current = child(env);
      expect((await current.exit).signal).toBe('SIGKILL');
      // Only one process may open the files: the new runtime re-applies (deduped) what the
      // client did not see acknowledged, and recovers from the outbox what the bus lost.
      current = child(env);
      await waitFor(async () => expectedIds.every((id) => rx.ids().includes(id)), 30_000, 'all delivered');
      await new Promise((r) => setTimeout(r, 2_000)); // let the results be written before stopping
      current.kill('SIGTERM');
      expect((await current.exit).code).toBe(0);
      await checkDelivered(rx, ep.secret!, kill.killedEventId());
      const db = await openDb({ dataDir: dir });
      await checkLog(db, kill.killedEventId()!);
      await db.close();
    } finally {
      current?.kill('SIGKILL');
      rx.release();
      await rx.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
