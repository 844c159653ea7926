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
import { CursorNotFound } from '../../runtime/merchant/intent-reads.ts';
import { keyedId, poolBytes, randomId } from '../../runtime/merchant/secrets.ts';
import type { Quote } from '../../runtime/rates/rate-source.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admitKey, inFlight, offeredKeyHash } from '../http/admission.ts';
import { jsonBody } from '../http/body.ts';
import { idempotencyKey, requestHash } from '../http/idempotency.ts';
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
    key: string;
    hash: string;
  }

  /** Validation and the fiat quote run before the gate so a valid request claims its key in the same round trip. */
  async function prepare(req: FastifyRequest): Promise<Prepared | AppError> {
    try {
      const key = idempotencyKey(req);
      const body = jsonBody(req);
      const input = validateCreate(body);
      const hash = requestHash(CREATE_ROUTE, body);
      if (input.amount.kind === 'nanm') return { input, quote: null, anm: input.amount.nanm, key, hash };
      const quote = await d.rates.quote(input.currency);
      if (!quote) throw new AppError('currency_unsupported');
      const anm = fiatToNanm(input.amount.value, quote.rate);
      if (anm > MAX_NANM) throw new AppError('invalid_amount');
      return { input, quote, anm, key, hash };
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
  }

  app.post('/api/v1/payment-intents', async (req, reply) => {
    const prepared = await prepare(req);
    const g = await d.gate.pass({
      ip: req.ip,
      keyHash: offeredKeyHash(req, d.pepper),
      ...(prepared instanceof AppError
        ? {}
        : {
            // With merchant_order_id the id is derived once the gate has named the merchant.
            claim: { key: prepared.key, requestHash: prepared.hash, newIntentId: prepared.input.merchant_order_id === null ? randomId('pay_') : null },
          }),
    });
    const key = admitKey(reply, g);
    if (prepared instanceof AppError) throw prepared;
    const claim = g.claim!;
    if (claim.outcome === 'reused') throw new AppError('idempotency_key_reused');
    if (claim.outcome === 'in_flight') throw inFlight();
    if (claim.outcome === 'replay') {
      return reply.code(200).headers(claim.headers).header('idempotent-replay', 'true').send(claim.body);
    }
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
    const g = await d.gate.pass({ ip: req.ip, keyHash: offeredKeyHash(req, d.pepper) });
    const key = admitKey(reply, g);
    const q = validateList(req.query);
    try {
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
    } catch (err) {
      if (err instanceof CursorNotFound) throw new AppError('bad_request', 'starting_after names no payment intent.');
      throw err;
    }
  });

  async function readOwn(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const id = req.params.id;
    const g = await d.gate.pass({ ip: req.ip, keyHash: offeredKeyHash(req, d.pepper), ...(INTENT_ID.test(id) ? { readId: id } : {}) });
    const key = admitKey(reply, g);
    // Another merchant's (or mode's) id reads as absent: 404, never 403 (spec rule 11).
    if (!g.read) throw new AppError('not_found', 'No such payment intent.');
    return { key, id, read: g.read };
  }

  app.get<{ Params: { id: string } }>('/api/v1/payment-intents/:id', async (req, reply) => {
    const { read } = await readOwn(req, reply);
    sendJson(reply, 200, render(read.snapshot, read.state));
    return reply;
  });

  app.post<{ Params: { id: string } }>('/api/v1/payment-intents/:id/cancel', async (req, reply) => {
    const { key, id } = await readOwn(req, reply);
    const r = await d.host.apply({ kind: INTENT_KIND, id, merchant: key.merchant, mode: key.mode }, { type: 'intent.cancel', id: `cancel:${randomUUID()}`, at: now() });
    if (r.outcome !== 'applied') throw new AppError('not_cancellable', `A payment intent in status ${r.status} cannot be canceled.`);
    sendJson(reply, 200, render(r.snapshot, r.status));
    return reply;
  });
}
