import type { FastifyServerOptions } from 'fastify';
import type { EventBase } from '../machines/kit/durable.ts';
import type { ActorTarget, ApplyResult, CreateCompanion } from '../runtime/engine/actor-types.ts';
import type { Treasury } from '../runtime/merchant/bootstrap.ts';
import type { Gate, IdempotencyRecords } from '../runtime/merchant/gate.ts';
import type { RateBuckets } from '../runtime/merchant/rate-buckets.ts';
import type { CheckoutReads } from '../runtime/merchant/checkout-reads.ts';
import type { IntentReads } from '../runtime/merchant/intent-reads.ts';
import type { SnapshotFeed } from '../runtime/engine/snapshot-feed.ts';
import type { Merchants } from '../runtime/merchant/merchants.ts';
import type { RateSource } from '../runtime/rates/rate-source.ts';
import type { WebhooksPluginOptions } from './webhooks-plugin.ts';
import type { RefundReads } from '../runtime/merchant/refund-reads.ts';
import type { Invoices } from '../runtime/commerce/invoices.ts';
import type { AnmRpcClient } from '../runtime/chain/rpc-client.ts';
import type { OpsConsoleDeps } from './ops/deps.ts';
import type { DashboardServices } from '../runtime/dashboard/index.ts';
import type { CommerceServices } from '../runtime/commerce/index.ts';

/** Everything the HTTP edge needs; `buildApp(deps)` wires no storage or bus of its own. */
export interface GatewayDeps {
  /** The only way the gateway changes domain state: events to actors. */
  host: {
    apply(target: ActorTarget, event: unknown, companion?: CreateCompanion): Promise<ApplyResult>;
    /** `apply` after this process's earlier events for the same actor (a hot actor's writes then rarely conflict). */
    applyInOrder?(target: ActorTarget, event: unknown): Promise<ApplyResult>;
    /** An event through the bus, applied (and retried) by the runtime: for an actor that may not exist yet. */
    send?(target: ActorTarget, event: EventBase & Record<string, unknown>): Promise<void>;
  };
  gate: Gate;
  idempotency: IdempotencyRecords;
  /** Deletes rate-limit buckets that have refilled (run by `startHttp`'s sweep); absent, nothing sweeps them. */
  rateBuckets?: RateBuckets;
  intents: IntentReads;
  checkout: CheckoutReads;
  /** The engine's snapshot feed (one bus subscription per process); without it `/c/{id}/events` is not served. */
  feed?: Pick<SnapshotFeed, 'subscribe'> & Partial<Pick<SnapshotFeed, 'ready' | 'subscribeOwner'>>;
  /** Checkout event-stream tuning (tests shorten the heartbeat). */
  checkoutStreams?: { heartbeatMs?: number; maxStreams?: number; maxPerIp?: number };
  merchants: Merchants;
  /** Webhook endpoint management (operator API); absent in apps that do not serve it. */
  webhookAdmin?: Omit<WebhooksPluginOptions, 'operatorToken'>;
  refunds: RefundReads;
  /** Invoice reads and numbering; without it the invoice routes and pages are not served. */
  invoices?: Invoices;
  /** Merchant logins, sessions and page reads; without it `/dashboard` is not served. */
  dashboard?: DashboardServices;
  /** Payment links and their pages (`/p`, `/l`, `/api/v1/payment-links`); absent, those paths are 404. */
  commerce?: CommerceServices;
  /** Node JSON-RPC per mode: refund nonce hints and `POST /api/v1/refunds/{id}/submit`. */
  chain?: Record<'live' | 'test', Pick<AnmRpcClient, 'getNonce' | 'sendRawTransaction'>>;
  rates: RateSource;
  treasury: Treasury;
  /** Server pepper for key hashes and keyed intent ids. */
  pepper: Buffer;
  operatorToken: string;
  /** The operator console at `/ops` (pages, data, live streams); absent, those paths are 404. */
  opsConsole?: OpsConsoleDeps;
  /** Public base URL for `checkout_url`; a function because a test server learns its port late. */
  baseUrl: () => string;
  /** Where the marketplace answers, for the landing page's link (when this process runs it). */
  marketplaceUrl?: () => string | undefined;
  /** True when the database answers. */
  dbHealthy: () => Promise<boolean>;
  /** Set while the process drains: /healthz answers 503 so balancers stop routing here. */
  lifecycle: { draining: boolean };
  /** Fastify's pino options; tests pass a `stream` to read the lines. */
  logger?: FastifyServerOptions['logger'];
  now?: () => number;
}
