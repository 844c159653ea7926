/**
 * A runtime process (engine + webhook intake + delivery worker) for the webhook fault tests:
 * the parent's receiver SIGKILLs it in the middle of a delivery and starts another one.
 * Env: BACKEND=real|embedded, SCHEMA, NAMESPACE, PGLITE_DIR, LEASE_MS, EVENTS (JSON list of
 * {target, event} applied directly, for the embedded backend whose files only one process
 * may open). Runs until SIGTERM.
 */
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import type { ActorTarget } from '../../runtime/engine/actor-types.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { WebhookRuntime } from '../../runtime/webhooks/service.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, NATS_URL } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

const env = process.env;
const real = env.BACKEND === 'real';
const db = real ? await openDb({ databaseUrl: DATABASE_URL, schema: env.SCHEMA }) : await openDb({ dataDir: env.PGLITE_DIR });
const bus = real ? await NatsBus.connect({ url: NATS_URL, namespace: env.NAMESPACE! }) : new MemoryBus();
const engine = new Engine({ db, bus, registry: new MachineRegistry([orderDefinition]), ackWaitMs: 1_000 });
await engine.start();
const webhooks = new WebhookRuntime(db, bus, {
  allowPrivate: true,
  worker: { leaseMs: Number(env.LEASE_MS ?? 1_500), timeoutMs: 1_000, pollMs: 50, schedule: { scale: 0.001 } },
});
await webhooks.start();
process.on('SIGTERM', () => {
  void (async () => {
    await webhooks.stop();
    await engine.stop();
    await bus.close();
    await db.close();
    process.exit(0);
  })();
});
if (env.EVENTS) {
  for (const { target, event } of JSON.parse(env.EVENTS) as Array<{ target: ActorTarget; event: Record<string, unknown> }>) {
    await engine.host.apply(target, event);
  }
}
process.stdout.write('ready\n');
