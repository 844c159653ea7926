/**
 * `/api/v1/payment-intents`: create, list, retrieve, cancel. Creates and cancels are events
 * to the payment-intent actor; reads are its stored snapshot. Nothing else writes.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { toResource } from '../../machines/payment-intent/view.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { ApplyResult } from '../../runtime/engine/actor-types.ts';
import type { GateKey } from '../../runtime/merchant/gate.ts';
import { keyedId, randomId } from '../../runtime/merchant/secrets.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admit, body, idempotencyClaim, idempotencyHeader, intentRead, ipLimit, refuse, secretKey } from '../http/admission.ts';
import { jsonBody } from '../http/body.ts';
import { JSON_TYPE, sendJson } from '../http/reply.ts';
import { intentCreateEvent, prepareCreate, type PreparedCreate } from '../payment-intents/create-event.ts';
import { validateList } from '../payment-intents/validate.ts';

const INTENT_KIND = 'payment_intent';
const INTENT_ID = /^pay_[a-z2-7]{24}$/;
const CREATE_ROUTE = 'POST /api/v1/payment-intents';

function intentIdFor(pepper: Buffer, key: Pick<GateKey, 'merchant' | 'mode'>, merchantOrderId: string | null): string {
  // merchant_order_id is unique per merchant and mode without a side table: it names the actor (ADR 0006).
  return merchantOrderId === null ? randomId('pay_') : keyedId('pay_', pepper, ['order', key.merchant, key.mode, merchantOrderId]);
}

export default async function paymentIntents(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const now = d.now ?? Date.now;
  const render = (snapshot: PersistedSnapshot, status: string) =>
    toResource(snapshot.context as PaymentIntentContext, status, { baseUrl: d.baseUrl() });

  /** Validation and the fiat quote run before the gate so a valid request claims its key in the same round trip. */
  const prepare = (req: FastifyRequest) => prepareCreate(d, jsonBody(req));

  const keyed = [ipLimit, ...secretKey(d.pepper)];
  const createSteps = [
    ...keyed,
    idempotencyHeader(true),
    body(prepare),
    // With merchant_order_id the id is derived once the gate has named the merchant.
    idempotencyClaim<PreparedCreate>(CREATE_ROUTE, (p) => p.raw, (p) => (p.input.merchant_order_id === null ? randomId('pay_') : null)),
  ];
  const readSteps = [
    ...keyed,
    intentRead((req) => {
      const id = (req.params as { id: string }).id;
      return INTENT_ID.test(id) ? id : null;
    }),
  ];

  app.post('/api/v1/payment-intents', { config: { admission: createSteps } }, async (req, reply) => {
    const a = await admit<PreparedCreate>(d.gate, req, reply, createSteps);
    if (!a.admitted) return refuse(reply, a);
    const key = a.key!;
    const prepared = { ...a.body, key: a.claim!.key };
    const claim = a.claim!;
    const release = () => d.idempotency.release(key.merchant, key.mode, prepared.key);
    if (!key.payoutAddress) {
      await release();
      throw new AppError('payout_address_required');
    }
    const intentId = claim.intentId ?? intentIdFor(d.pepper, key, prepared.input.merchant_order_id);
    const at = now();
    const event = intentCreateEvent(d, intentId, { merchant: key.merchant, mode: key.mode, payoutAddress: key.payoutAddress, successUrl: key.successUrl, cancelUrl: key.cancelUrl }, prepared, at);
    const headers = { 'content-type': JSON_TYPE };
    // A new intent's response is recorded in the statement that creates it (ADR 0005).
    let recorded: string | undefined;
    const companion = d.idempotency.withCreate(key.merchant, key.mode, prepared.key, 201, headers, (created) => (recorded = JSON.stringify(render(created.snapshot, created.status))));
    let r: ApplyResult;
    try {
      r = await d.host.apply({ kind: INTENT_KIND, id: intentId, merchant: key.merchant, mode: key.mode }, event, companion);
    } catch (err) {
      await release().catch(() => undefined);
      throw err;
    }
    // Applied: a new intent. Otherwise the actor already existed: the same order (or a
    // retry finishing an abandoned attempt) returns the existing intent.
    const status = r.outcome === 'applied' ? 201 : 200;
    const body = r.companionWritten && recorded !== undefined ? recorded : JSON.stringify(render(r.snapshot, r.status));
    if (!r.companionWritten) await d.idempotency.done(key.merchant, key.mode, prepared.key, status, headers, body);
    return reply.code(status).type(JSON_TYPE).send(body);
  });

  app.get('/api/v1/payment-intents', async (req, reply) => {
    const a = await admit(d.gate, req, reply, keyed);
    if (!a.admitted) return refuse(reply, a);
    const key = a.key!;
    const q = validateList(req.query);
    // An unknown cursor is CursorNotFound, a TerminalError ensureError maps to 400 bad_request.
    const page = await d.intents.list({
      merchant: key.merchant,
      mode: key.mode,
      limit: q.limit,
      status: q.status,
      id: q.merchant_order_id === undefined ? undefined : intentIdFor(d.pepper, key, q.merchant_order_id),
      startingAfter: q.starting_after,
    });
    sendJson(reply, 200, { object: 'list', has_more: page.hasMore, data: page.rows.map((r) => render(r.snapshot, r.state)) });
    return reply;
  });

  async function readOwn(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const a = await admit(d.gate, req, reply, readSteps);
    if (!a.admitted) return refuse(reply, a);
    // Another merchant's (or mode's) id reads as absent: 404, never 403 (spec rule 11).
    if (!a.read) throw new AppError('not_found', 'No such payment intent.');
    return { key: a.key!, id: req.params.id, read: a.read };
  }

  app.get<{ Params: { id: string } }>('/api/v1/payment-intents/:id', async (req, reply) => {
    const own = await readOwn(req, reply);
    if (!('read' in own)) return own;
    sendJson(reply, 200, render(own.read.snapshot, own.read.state));
    return reply;
  });

  app.post<{ Params: { id: string } }>('/api/v1/payment-intents/:id/cancel', { config: { admission: readSteps } }, async (req, reply) => {
    const own = await readOwn(req, reply);
    if (!('read' in own)) return own;
    const { key, id } = own;
    const r = await d.host.apply({ kind: INTENT_KIND, id, merchant: key.merchant, mode: key.mode }, { type: 'intent.cancel', id: `cancel:${randomUUID()}`, at: now() });
    if (r.outcome !== 'applied') throw new AppError('not_cancellable', `A payment intent in status ${r.status} cannot be canceled.`);
    sendJson(reply, 200, render(r.snapshot, r.status));
    return reply;
  });
}
