/**
 * `/api/v1/payment-intents`: create, list, retrieve, cancel. Creates and cancels are events
 * to the payment-intent actor; reads are its stored snapshot. Nothing else writes.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { paymentReference } from '../../machines/chain/reference.ts';
import { fiatToNanm } from '../../machines/money/money.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { DEFAULT_MONITOR_WINDOW_MS, DEFAULT_REQUIRED_CONFIRMATIONS, type IntentCreateEvent } from '../../machines/payment-intent/events.ts';
import { toResource } from '../../machines/payment-intent/view.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { ApplyResult } from '../../runtime/engine/actor-types.ts';
import type { GateKey } from '../../runtime/merchant/gate.ts';
import { keyedId, poolBytes, randomId } from '../../runtime/merchant/secrets.ts';
import type { Quote } from '../../runtime/rates/rate-source.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admit, body, idempotencyClaim, idempotencyHeader, intentRead, ipLimit, refuse, secretKey } from '../http/admission.ts';
import { jsonBody } from '../http/body.ts';
import { JSON_TYPE, sendJson } from '../http/reply.ts';
import { MAX_NANM, validateCreate, validateList, type CreateInput } from '../payment-intents/validate.ts';

const INTENT_KIND = 'payment_intent';
const INTENT_ID = /^pay_[a-z2-7]{24}$/;
const EXPIRY_MS = 30 * 60 * 1000;
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

  interface Prepared {
    input: CreateInput;
    quote: Quote | null;
    anm: bigint;
    /** The body as sent: its canonical form is the request's fingerprint. */
    raw: unknown;
  }

  /** Validation and the fiat quote run before the gate so a valid request claims its key in the same round trip. */
  async function prepare(req: FastifyRequest): Promise<Prepared> {
    const raw = jsonBody(req);
    const input = validateCreate(raw);
    if (input.amount.kind === 'nanm') return { input, quote: null, anm: input.amount.nanm, raw };
    const quote = await d.rates.quote(input.currency);
    if (!quote) throw new AppError('currency_unsupported');
    const anm = fiatToNanm(input.amount.value, quote.rate);
    if (anm > MAX_NANM) throw new AppError('invalid_amount');
    return { input, quote, anm, raw };
  }

  const keyed = [ipLimit, ...secretKey(d.pepper)];
  const createSteps = [
    ...keyed,
    idempotencyHeader(true),
    body(prepare),
    // With merchant_order_id the id is derived once the gate has named the merchant.
    idempotencyClaim<Prepared>(CREATE_ROUTE, (p) => p.raw, (p) => (p.input.merchant_order_id === null ? randomId('pay_') : null)),
  ];
  const readSteps = [
    ...keyed,
    intentRead((req) => {
      const id = (req.params as { id: string }).id;
      return INTENT_ID.test(id) ? id : null;
    }),
  ];

  app.post('/api/v1/payment-intents', async (req, reply) => {
    const a = await admit<Prepared>(d.gate, req, reply, createSteps);
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
    const event: IntentCreateEvent = {
      type: 'intent.create',
      id: `${intentId}:create`,
      at,
      intent_id: intentId,
      merchant_id: key.merchant,
      mode: key.mode,
      currency: prepared.input.currency,
      requested_amount: prepared.input.amount.kind === 'nanm' ? prepared.input.amount.requested : prepared.input.amount.value,
      anm_amount: prepared.anm.toString(),
      merchant_order_id: prepared.input.merchant_order_id,
      description: prepared.input.description,
      metadata: prepared.input.metadata,
      success_url: prepared.input.success_url ?? key.successUrl,
      cancel_url: prepared.input.cancel_url ?? key.cancelUrl,
      payment_address: key.payoutAddress,
      treasury_address: d.treasury[key.mode],
      payment_reference: paymentReference(poolBytes(20)),
      expires_at: at + EXPIRY_MS,
      required_confirmations: DEFAULT_REQUIRED_CONFIRMATIONS,
      monitor_window_ms: DEFAULT_MONITOR_WINDOW_MS,
      quote: prepared.quote,
    };
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

  app.post<{ Params: { id: string } }>('/api/v1/payment-intents/:id/cancel', async (req, reply) => {
    const own = await readOwn(req, reply);
    if (!('read' in own)) return own;
    const { key, id } = own;
    const r = await d.host.apply({ kind: INTENT_KIND, id, merchant: key.merchant, mode: key.mode }, { type: 'intent.cancel', id: `cancel:${randomUUID()}`, at: now() });
    if (r.outcome !== 'applied') throw new AppError('not_cancellable', `A payment intent in status ${r.status} cannot be canceled.`);
    sendJson(reply, 200, render(r.snapshot, r.status));
    return reply;
  });
}
