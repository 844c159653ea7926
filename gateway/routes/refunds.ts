/**
 * `/api/v1/refunds`: a refund is a NEW transfer the merchant signs from the payout address
 * (spec rule 8). Create reserves part of the intent's cap through its actor (`refund.reserve`,
 * which also creates the refund actor through the outbox); reads render the refund snapshot;
 * submit broadcasts a signed transfer and tells the refund actor.
 */
import { createHmac } from 'node:crypto';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NETWORKS, refundReference, signingBytes, verifyTx } from '../../machines/chain/index.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { refundRemaining } from '../../machines/payment-intent/rules.ts';
import type { RefundContext } from '../../machines/refund/context.ts';
import { refundResource, type RefundStatus } from '../../machines/refund/view.ts';
import type { GateKey } from '../../runtime/merchant/gate.ts';
import { keyedId, randomId } from '../../runtime/merchant/secrets.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admit, body, idempotencyClaim, idempotencyHeader, ipLimit, refuse, secretKey } from '../http/admission.ts';
import { isPlainObject, jsonBody } from '../http/body.ts';
import { JSON_TYPE, sendJson } from '../http/reply.ts';
import { validateRefund, type RefundInput } from './refund-input.ts';

const REFUNDABLE = new Set(['PAID', 'PARTIALLY_REFUNDED']);
const REFUND_ID = /^re_[a-z2-7]{1,64}$/;

const CREATE_ROUTE = 'POST /api/v1/refunds';

/** The body as the key compares it: amount and amount_nanm both as nANM, an absent field as null. */
function normalised(input: RefundInput): unknown {
  return { payment_intent: input.paymentIntent, amount: input.amount === null ? null : input.amount.toString(), reason: input.reason };
}

export default async function refunds(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const now = d.now ?? Date.now;

  const keyed = [ipLimit, ...secretKey(d.pepper)];
  // The key is optional on refunds; with one, a different normalised body is 409 and a finished
  // refund replays its first response (spec "Errors": idempotency_key_reused), as on intents.
  const createSteps = [...keyed, idempotencyHeader(false), body((req) => validateRefund(jsonBody(req))), idempotencyClaim<RefundInput>(CREATE_ROUTE, normalised)];

  async function admitKey(req: FastifyRequest, reply: FastifyReply): Promise<GateKey | FastifyReply> {
    const a = await admit(d.gate, req, reply, keyed);
    return a.admitted ? a.key! : refuse(reply, a);
  }

  /** Refund id and reference: derived from the Idempotency-Key when there is one, so a retry names the same refund. */
  function identity(key: GateKey, idem: string | null): { id: string; reference: string } {
    if (idem === null) return { id: randomId('re_'), reference: refundReference(crypto.getRandomValues(new Uint8Array(20))) };
    const mac = createHmac('sha256', d.pepper).update(JSON.stringify(['refund-ref', key.merchant, key.mode, idem])).digest();
    return { id: keyedId('re_', d.pepper, ['refund', key.merchant, key.mode, idem]), reference: refundReference(mac.subarray(0, 20)) };
  }

  async function nonceHint(mode: 'live' | 'test', address: string): Promise<bigint | null> {
    const rpc = d.chain?.[mode];
    return rpc ? rpc.getNonce(address, 'pending').catch(() => null) : null;
  }

  function createEvent(key: GateKey, input: RefundInput, intent: PaymentIntentContext, amount: bigint, ids: { id: string; reference: string }, nonce: bigint | null, at: number) {
    const network = NETWORKS[key.mode];
    // What the merchant signs: ANM-TX-v1 signing bytes without the public key (the signer's
    // wallet fills it in), nonce from the node when it answered.
    const payload = signingBytes({
      chain_id: network.chainId,
      from_public_key: new Uint8Array(0),
      nonce: nonce ?? 0n,
      outputs: [{ to: intent.tx!.from, amount }],
      reference: ids.reference,
      fee: 0n,
    });
    return {
      type: 'refund.create',
      id: `${ids.id}:create`,
      at,
      refund_id: ids.id,
      payment_intent: input.paymentIntent,
      merchant_id: key.merchant,
      mode: key.mode,
      amount: amount.toString(),
      reason: input.reason,
      chain_id: network.chainId,
      from: intent.payment_address,
      to: intent.tx!.from,
      reference: ids.reference,
      nonce_hint: nonce === null ? null : nonce.toString(),
      signing_payload: bytesToHex(payload),
      metadata: intent.metadata,
    };
  }

  app.post('/api/v1/refunds', async (req, reply) => {
    const a = await admit<RefundInput>(d.gate, req, reply, createSteps);
    if (!a.admitted) return refuse(reply, a);
    const key = a.key!;
    const claim = a.claim;
    try {
      const res = await createRefund(key, a.body, claim?.key ?? null);
      const text = JSON.stringify(res.body);
      if (claim) await d.idempotency.done(key.merchant, key.mode, claim.key, res.status, { 'content-type': JSON_TYPE }, text);
      return reply.code(res.status).type(JSON_TYPE).send(text);
    } catch (err) {
      // A refusal or a failure leaves nothing behind: a retry with the key runs afresh.
      if (claim) await d.idempotency.release(key.merchant, key.mode, claim.key).catch(() => undefined);
      throw err;
    }
  });

  async function createRefund(key: GateKey, input: RefundInput, idem: string | null): Promise<{ status: number; body: unknown }> {
    // Spec Operations 3 and Authentication 7: refunds move real funds; test keys never do.
    if (key.mode !== 'live') throw new AppError('forbidden', 'Refunds work in live mode only.');
    const intent = await d.refunds.own('payment_intent', input.paymentIntent, key.merchant, key.mode);
    if (!intent) throw new AppError('not_found', 'No such payment intent.');
    const ctx = intent.snapshot.context as PaymentIntentContext;
    const ids = identity(key, idem);
    // The key's record expires after 24 hours; the refund it named does not.
    const existing = idem === null ? null : await d.refunds.own('refund', ids.id, key.merchant, key.mode);
    if (existing) return { status: 200, body: sameRefund(existing, input) };
    if (!REFUNDABLE.has(intent.state) || !ctx.tx) throw new AppError('not_refundable');
    const remaining = refundRemaining(ctx);
    const amount = input.amount ?? remaining;
    if (amount <= 0n || amount > remaining) throw new AppError('refund_refused', `The refundable remainder is ${remaining} nANM.`);
    const at = now();
    const create = createEvent(key, input, ctx, amount, ids, await nonceHint(key.mode, ctx.payment_address), at);
    const r = await d.host.apply(
      { kind: 'payment_intent', id: input.paymentIntent, merchant: key.merchant, mode: key.mode },
      { type: 'refund.reserve', id: `${ids.id}:reserve`, at, refund_id: ids.id, amount: amount.toString(), refund_create: create },
    );
    if (r.outcome === 'ignored') throw new AppError('refund_refused', 'The refund exceeds the refundable remainder.');
    // The reservation already queued this create in the outbox; applying it here too (same event
    // id, deduped) makes the refund readable in this response.
    const made = await d.host.apply({ kind: 'refund', id: ids.id, merchant: key.merchant, mode: key.mode }, create);
    return { status: r.outcome === 'applied' ? 201 : 200, body: refundResource(made.snapshot.context as RefundContext, made.status as RefundStatus) };
  }

  /** The refund this key made before its record expired, if the request matches what it recorded. */
  function sameRefund(existing: { state: string; snapshot: { context: unknown } }, input: RefundInput) {
    const c = existing.snapshot.context as RefundContext;
    if (c.payment_intent !== input.paymentIntent || (input.amount !== null && BigInt(c.amount) !== input.amount) || c.reason !== input.reason) {
      throw new AppError('idempotency_key_reused');
    }
    return refundResource(c, existing.state as RefundStatus);
  }

  async function ownRefund(req: FastifyRequest<{ Params: { id: string } }>, key: GateKey) {
    const found = REFUND_ID.test(req.params.id) ? await d.refunds.own('refund', req.params.id, key.merchant, key.mode) : null;
    if (!found) throw new AppError('not_found', 'No such refund.');
    return found;
  }

  app.get<{ Params: { id: string } }>('/api/v1/refunds/:id', async (req, reply) => {
    const key = await admitKey(req, reply);
    if (!('merchant' in key)) return key;
    const r = await ownRefund(req, key);
    sendJson(reply, 200, refundResource(r.snapshot.context as RefundContext, r.state as RefundStatus));
    return reply;
  });

  app.post<{ Params: { id: string } }>('/api/v1/refunds/:id/submit', async (req, reply) => {
    const key = await admitKey(req, reply);
    if (!('merchant' in key)) return key;
    const r = await ownRefund(req, key);
    const c = r.snapshot.context as RefundContext;
    const body = jsonBody(req);
    const hex = isPlainObject(body) ? body.signed_transaction : undefined;
    if (typeof hex !== 'string' || !/^[0-9a-f]+$/.test(hex)) throw new AppError('invalid_request', 'signed_transaction (hex) is required.');
    if (r.state !== 'REQUIRES_SIGNATURE') throw new AppError('conflict', `The refund is ${r.state}; it needs no signature.`);
    const network = NETWORKS[key.mode];
    const v = verifyTx(hex, { chainId: network.chainId, hrp: network.hrp });
    if (!v.ok) throw new AppError('invalid_request', `signed_transaction: ${v.error.message}`);
    const pays = v.tx.outputs.some((o) => o.to === c.to && o.amount >= BigInt(c.amount));
    if (v.tx.reference !== c.reference || !pays || v.from !== c.from) {
      throw new AppError('invalid_request', 'signed_transaction must carry the refund reference and pay the amount to the customer from the payout address.');
    }
    const rpc = d.chain?.[key.mode];
    if (!rpc) throw new AppError('internal_error');
    try {
      await rpc.sendRawTransaction(hex);
    } catch (err) {
      throw new AppError('invalid_request', `The node refused the transaction: ${err instanceof Error ? err.message : String(err)}`);
    }
    const done = await d.host.apply({ kind: 'refund', id: req.params.id }, { type: 'refund.submitted', id: `${req.params.id}:submit:${v.hash}`, at: now(), tx_hash: v.hash });
    sendJson(reply, 200, refundResource(done.snapshot.context as RefundContext, done.status as RefundStatus));
    return reply;
  });
}
