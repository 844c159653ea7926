/**
 * Refund commands shared by `/api/v1/refunds` and the dashboard: a refund is a NEW transfer the
 * merchant signs from the payout address (spec rule 8). Create reserves part of the intent's
 * cap through its actor (`refund.reserve`, which also creates the refund actor through the
 * outbox); submit broadcasts a signed transfer and tells the refund actor. The caller has
 * named the merchant and mode (an API key, or a dashboard session).
 */
import { createHmac } from 'node:crypto';
import { bytesToHex } from '@noble/hashes/utils.js';
import { NETWORKS, refundReference, signingBytes, verifyTx } from '../../machines/chain/index.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { refundRemaining } from '../../machines/payment-intent/rules.ts';
import type { RefundContext } from '../../machines/refund/context.ts';
import { refundResource, type RefundStatus } from '../../machines/refund/view.ts';
import { keyedId, randomId, type Mode } from '../../runtime/merchant/secrets.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import type { RefundInput } from '../routes/refund-input.ts';

const REFUNDABLE = new Set(['PAID', 'PARTIALLY_REFUNDED']);
export const REFUND_ID = /^re_[a-z2-7]{1,64}$/;

export interface Owner {
  merchant: string;
  mode: Mode;
}

export type RefundBody = ReturnType<typeof refundResource>;

export function refundCommands(d: GatewayDeps) {
  const now = d.now ?? Date.now;

  /** Refund id and reference: derived from the Idempotency-Key when there is one, so a retry names the same refund. */
  function identity(key: Owner, idem: string | null): { id: string; reference: string } {
    if (idem === null) return { id: randomId('re_'), reference: refundReference(crypto.getRandomValues(new Uint8Array(20))) };
    const mac = createHmac('sha256', d.pepper).update(JSON.stringify(['refund-ref', key.merchant, key.mode, idem])).digest();
    return { id: keyedId('re_', d.pepper, ['refund', key.merchant, key.mode, idem]), reference: refundReference(mac.subarray(0, 20)) };
  }

  async function nonceHint(mode: Mode, address: string): Promise<bigint | null> {
    const rpc = d.chain?.[mode];
    return rpc ? rpc.getNonce(address, 'pending').catch(() => null) : null;
  }

  function createEvent(key: Owner, input: RefundInput, intent: PaymentIntentContext, amount: bigint, ids: { id: string; reference: string }, nonce: bigint | null, at: number) {
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

  async function createRefund(key: Owner, input: RefundInput, idem: string | null): Promise<{ status: number; body: unknown }> {
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

  /** The owner's refund by id, or 404. */
  async function own(key: Owner, id: string) {
    const found = REFUND_ID.test(id) ? await d.refunds.own('refund', id, key.merchant, key.mode) : null;
    if (!found) throw new AppError('not_found', 'No such refund.');
    return found;
  }

  /** Broadcasts the merchant's signed transfer for a refund waiting for it, and tells the refund actor. */
  async function submit(key: Owner, id: string, hex: unknown): Promise<RefundBody> {
    const r = await own(key, id);
    const c = r.snapshot.context as RefundContext;
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
    const done = await d.host.apply({ kind: 'refund', id }, { type: 'refund.submitted', id: `${id}:submit:${v.hash}`, at: now(), tx_hash: v.hash });
    return refundResource(done.snapshot.context as RefundContext, done.status as RefundStatus);
  }

  return { create: createRefund, own, submit };
}
