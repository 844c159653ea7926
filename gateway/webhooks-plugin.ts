import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { getDelivery, listDeliveries, redeliver } from '../runtime/webhooks/deliveries.ts';
import { DEFAULT_ROTATION_GRACE_MS, listEndpoints, rotateSecret, setEndpoint } from '../runtime/webhooks/endpoints.ts';
import { WebhookError } from '../runtime/webhooks/errors.ts';
import type { LookupAll } from '../runtime/webhooks/url-policy.ts';
import { AppError } from './errors.ts';
import { strictJsonParser } from './http/body.ts';
import { sendError } from './http/error-reply.ts';
import { isOperator } from './operator-auth.ts';

/**
 * Operator JSON API for webhook endpoints and the delivery log, under
 * `/ops/api/merchants/:merchant/webhooks` (the dashboard pages come later and reuse the
 * runtime functions behind it). Register with `app.register(webhooksPlugin, { db, operatorToken })`.
 */
/** The store the runtime's webhook functions work on (the gateway holds it, never opens it). */
type WebhookStore = Parameters<typeof listEndpoints>[0];

export interface WebhooksPluginOptions {
  db: WebhookStore;
  operatorToken: string;
  /** ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1; read from the environment when not given. */
  allowPrivateWebhooks?: boolean;
  /** How long a rotated-out secret keeps signing; default 24 h (ANMPAY_WEBHOOK_ROTATION_GRACE_S). */
  rotationGraceMs?: number;
  /** Called after a redeliver so a worker in this process sends it at once. */
  onRedeliver?: () => void;
  lookupAll?: LookupAll;
}

type MerchantParams = { merchant: string };
type DeliveryParams = { merchant: string; id: string };

const BASE = '/ops/api/merchants/:merchant/webhooks';


function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const b = req.body;
  if (b === undefined || b === null) return {};
  if (typeof b !== 'object' || Array.isArray(b)) throw new WebhookError('invalid_body', 'body must be a JSON object');
  return b as Record<string, unknown>;
}

function optionalInt(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new WebhookError('invalid_body', `${name} must be an integer`);
  return n;
}

function optionalString(v: unknown, name: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new WebhookError('invalid_body', `${name} must be a string`);
  return v;
}

export const webhooksPlugin: FastifyPluginAsync<WebhooksPluginOptions> = async (app, opts) => {
  const { db } = opts;
  const policy = { allowPrivate: opts.allowPrivateWebhooks ?? process.env.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1', ...(opts.lookupAll ? { lookupAll: opts.lookupAll } : {}) };
  const defaultGraceMs = opts.rotationGraceMs ?? DEFAULT_ROTATION_GRACE_MS;

  // The same strict JSON as the merchant API (gateway/http/strict-json.ts); the operator token
  // is checked in onRequest, before any body is read.
  strictJsonParser(app);

  app.addHook('onRequest', async (req, reply) => {
    if (!isOperator(req, opts.operatorToken)) return sendError(req, reply, new AppError('unauthorized', 'Operator token required.'));
  });

  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));

  // set: create the endpoint (secret shown this once) or change its URL (secret: null).
  app.post<{ Params: MerchantParams }>(BASE, async (req, reply) => {
    const b = bodyOf(req);
    const res = await setEndpoint(db, { merchant: req.params.merchant, mode: b.mode as 'live', url: optionalString(b.url, 'url') ?? '' }, policy);
    return reply.code(res.created ? 201 : 200).send(res);
  });

  app.post<{ Params: MerchantParams }>(`${BASE}/rotate`, async (req) => {
    const b = bodyOf(req);
    const grace = optionalInt(b.grace_seconds, 'grace_seconds');
    return rotateSecret(db, { merchant: req.params.merchant, mode: b.mode as 'live', graceMs: grace === undefined ? defaultGraceMs : grace * 1000 });
  });

  app.get<{ Params: MerchantParams }>(BASE, async (req) => ({ object: 'list', has_more: false, data: await listEndpoints(db, req.params.merchant) }));

  app.get<{ Params: MerchantParams; Querystring: Record<string, unknown> }>(`${BASE}/deliveries`, async (req) =>
    listDeliveries(db, req.params.merchant, {
      mode: optionalString(req.query.mode, 'mode'),
      status: optionalString(req.query.status, 'status'),
      event_id: optionalString(req.query.event_id, 'event_id'),
      starting_after: optionalString(req.query.starting_after, 'starting_after'),
      limit: optionalInt(req.query.limit, 'limit'),
    }),
  );

  app.get<{ Params: DeliveryParams }>(`${BASE}/deliveries/:id`, async (req) => getDelivery(db, req.params.merchant, req.params.id));

  // getDelivery first: another merchant's delivery is a 404 (spec: never 403).
  app.get<{ Params: DeliveryParams }>(`${BASE}/deliveries/:id/attempts`, async (req) => ({
    object: 'list',
    has_more: false,
    data: (await getDelivery(db, req.params.merchant, req.params.id)).attempt_log,
  }));

  app.post<{ Params: DeliveryParams }>(`${BASE}/deliveries/:id/redeliver`, async (req, reply) => {
    const res = await redeliver(db, req.params.merchant, req.params.id);
    opts.onRedeliver?.();
    return reply.code(202).send(res);
  });
};

export default webhooksPlugin;
