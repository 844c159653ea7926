import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { webhookEventId } from '../../runtime/engine/webhook-id.ts';
import { setEndpoint, type Mode } from '../../runtime/webhooks/endpoints.ts';
import { WebhookRuntime, type WebhookRuntimeOptions } from '../../runtime/webhooks/service.ts';
import type { DeliveryWorkerOptions } from '../../runtime/webhooks/worker.ts';
import type { Backend } from '../helpers/backends.ts';
import { waitFor } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

/**
 * The runtime as services.ts wires it (engine + webhook intake + delivery worker) on a test
 * backend, with the order fixture machine producing the events: every webhook in these tests
 * travels machine → outbox → relay → bus → intake → worker → HTTP.
 */
export interface Stack {
  engine: Engine;
  webhooks: WebhookRuntime;
  /** Creates order `id` for `merchant` and adds `adds` items: 1 + adds webhook facts. Returns their event ids. */
  order(merchant: string, id: string, adds?: number, mode?: Mode): Promise<string[]>;
  stop(): Promise<void>;
}

/** Retry delays scaled so the three-day schedule takes a fraction of a second (5 s → 5 ms). */
export const FAST_SCHEDULE = { scale: 0.001, jitter: 0.2 };

export async function startStack(b: Backend, worker: Partial<DeliveryWorkerOptions> = {}, extra: Partial<WebhookRuntimeOptions> = {}): Promise<Stack> {
  const engine = new Engine({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]) });
  await engine.start();
  const webhooks = new WebhookRuntime(b.db, b.bus, { allowPrivate: true, worker: { pollMs: 50, schedule: FAST_SCHEDULE, ...worker }, ...extra });
  await webhooks.start();
  const t0 = Date.now();
  // The fixture's `order.added` data is {n, total} with no order id, and the event id names
  // the fact by (merchant, type, data): give each order its own item sizes so facts differ.
  let orders = 0;
  return {
    engine,
    webhooks,
    async order(merchant, id, adds = 0, mode = 'test') {
      const target = { kind: 'order', id, merchant, mode };
      await engine.host.apply(target, { type: 'order.create', id: `${id}:create`, at: t0, ttl_ms: 3_600_000 });
      const ids = [webhookEventId(merchant, 'order.created', { id: `${id}:create` })];
      const base = 1000 * ++orders;
      let total = 0;
      for (let i = 1; i <= adds; i++) {
        const n = base + i;
        await engine.host.apply(target, { type: 'order.add', id: `${id}:add${i}`, at: t0 + i, n });
        total += n;
        // The fixture reports the running total after the add.
        ids.push(webhookEventId(merchant, 'order.added', { n, total }));
      }
      return ids;
    },
    async stop() {
      await webhooks.stop();
      await engine.stop();
    },
  };
}

export async function endpointFor(b: Backend, merchant: string, url: string, mode: Mode = 'test'): Promise<{ id: string; secret: string }> {
  const r = await setEndpoint(b.db, { merchant, mode, url }, { allowPrivate: true });
  return { id: r.endpoint_id, secret: r.secret! };
}

export async function deliveryStatuses(b: Backend, merchant: string): Promise<Record<string, number>> {
  const { rows } = await b.db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE merchant = $1 GROUP BY status`, [merchant]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export async function waitForStatus(b: Backend, merchant: string, want: Record<string, number>, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    async () => {
      const got = await deliveryStatuses(b, merchant);
      return Object.entries(want).every(([k, v]) => got[k] === v);
    },
    timeoutMs,
    `deliveries of ${merchant} to reach ${JSON.stringify(want)}`,
  );
}
