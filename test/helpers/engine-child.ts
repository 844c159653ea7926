/**
 * A runtime process for fault tests: the parent starts it, lets it die by SIGKILL at a chosen
 * point (after commit, before ack) and starts another one on the same backend.
 * Env: BACKEND=real|embedded, SCHEMA, NAMESPACE, PGLITE_DIR, KILL_AT (event id), EVENTS (JSON
 * list applied directly, embedded mode), HOLD=1 (keep consuming until SIGTERM).
 */
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL } from './backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';
import type { ActorTarget } from '../../runtime/engine/actor-types.ts';

const env = process.env;
const real = env.BACKEND === 'real';
const db = real ? await openDb({ databaseUrl: DATABASE_URL, schema: env.SCHEMA }) : await openDb({ dataDir: env.PGLITE_DIR });
const bus = real ? await NatsBus.connect({ url: NATS_URL, namespace: env.NAMESPACE! }) : new MemoryBus();
const engine = new Engine({
  db,
  bus,
  registry: new MachineRegistry([orderDefinition]),
  ackWaitMs: 1_000,
  sweeper: { pollMs: 50 },
  hooks: {
    afterCommit: (_result, event) => {
      if (event.id === env.KILL_AT) process.kill(process.pid, 'SIGKILL');
    },
  },
});
await engine.start();
const shutdown = async (): Promise<void> => {
  await engine.stop();
  await bus.close();
  await db.close();
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown());

if (env.EVENTS) {
  const list = JSON.parse(env.EVENTS) as Array<{ target: ActorTarget; event: Record<string, unknown> }>;
  const outcomes: Record<string, number> = {};
  for (const { target, event } of list) {
    const r = await engine.host.apply(target, event);
    outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  }
  // Let the relay publish what the outbox holds before reporting.
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
    if (rows[0]!.n === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  process.stdout.write(`${JSON.stringify({ outcomes })}\n`);
}
process.stdout.write('ready\n');
if (env.HOLD !== '1') await shutdown();
