/**
 * Invoice commands shared by `/api/v1/invoices`, the dashboard and the public `/i/{token}`
 * page. Every change is an event to the invoice actor (or to a payment intent); reads are its
 * snapshot. The caller has named the merchant and mode (an API key or a dashboard session),
 * except for `pay`, where the unguessable token is the capability.
 */
import { paymentReference } from '../../machines/chain/reference.ts';
import { withArticle } from '../../machines/kit/text.ts';
import type { InvoiceContext } from '../../machines/invoice/context.ts';
import { decimalsOf, toMinor } from '../../machines/invoice/rules.ts';
import { invoiceResource } from '../../machines/invoice/view.ts';
import { fiatToNanm } from '../../machines/money/money.ts';
import { DEFAULT_MONITOR_WINDOW_MS, DEFAULT_REQUIRED_CONFIRMATIONS, type IntentCreateEvent } from '../../machines/payment-intent/events.ts';
import type { PublicInvoice } from '../../runtime/commerce/invoices.ts';
import { keyedId, poolBytes, randomId, type Mode } from '../../runtime/merchant/secrets.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { MAX_NANM } from '../payment-intents/validate.ts';
import type { InvoiceInput } from './input.ts';

export const INVOICE_ID = /^inv_[a-z2-7]{24}$/;
export const INVOICE_TOKEN = /^[a-z2-7]{32}$/;
const EXPIRY_MS = 30 * 60 * 1000;
/** An intent in one of these is still the invoice's payment: the customer is sent back to it. */
const REUSABLE = new Set(['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID', 'PAID', 'PARTIALLY_REFUNDED', 'REFUNDED']);

export interface Owner {
  merchant: string;
  mode: Mode;
}

type Command = 'finalize' | 'void' | 'mark_uncollectible';
const ACCEPTS: Record<Command, readonly string[]> = { finalize: ['DRAFT'], void: ['DRAFT', 'OPEN'], mark_uncollectible: ['OPEN'] };

export function invoiceCommands(d: GatewayDeps) {
  const now = d.now ?? Date.now;
  const store = () => {
    if (!d.invoices) throw new AppError('not_found');
    return d.invoices;
  };
  const render = (ctx: unknown, status: string) => invoiceResource(ctx as InvoiceContext, status, { baseUrl: d.baseUrl(), now: now() });

  async function create(key: Owner, input: InvoiceInput, idem: string | null): Promise<{ status: number; body: ReturnType<typeof render> }> {
    if (input.currency !== 'ANM' && !(await d.rates.quote(input.currency))) throw new AppError('currency_unsupported');
    // With an Idempotency-Key, a retry after the key's record expired still names the same invoice.
    const id = idem === null ? randomId('inv_') : keyedId('inv_', d.pepper, ['invoice', key.merchant, key.mode, idem]);
    const r = await d.host.apply(
      { kind: 'invoice', id, merchant: key.merchant, mode: key.mode },
      { type: 'invoice.create', id: `${id}:create`, at: now(), invoice_id: id, merchant_id: key.merchant, mode: key.mode, token: randomId('', 20), ...input },
    );
    return { status: r.outcome === 'applied' ? 201 : 200, body: render(r.snapshot.context, r.status) };
  }

  async function own(key: Owner, id: string) {
    const found = INVOICE_ID.test(id) ? await store().own(id, key.merchant, key.mode) : null;
    if (!found) throw new AppError('not_found', 'No such invoice.');
    return found;
  }

  async function get(key: Owner, id: string) {
    const r = await own(key, id);
    return render(r.snapshot.context, r.state);
  }

  async function list(key: Owner, q: { limit: number; startingAfter?: string | undefined; status?: string | undefined }) {
    const page = await d.intents.list({ merchant: key.merchant, mode: key.mode, kind: 'invoice', limit: q.limit, status: q.status, startingAfter: q.startingAfter });
    return { object: 'list' as const, has_more: page.hasMore, data: page.rows.map((r) => render(r.snapshot.context, r.state)) };
  }

  /** finalize, void or mark_uncollectible: refused with 409 when the status does not allow it. */
  async function command(key: Owner, id: string, cmd: Command) {
    const r = await own(key, id);
    if (!ACCEPTS[cmd].includes(r.state)) throw new AppError('invalid_invoice_status', `${withArticle(r.state, { sentenceStart: true })} invoice cannot be ${cmd === 'mark_uncollectible' ? 'marked uncollectible' : cmd === 'void' ? 'voided' : 'finalized'}.`);
    const at = now();
    const extra = cmd === 'finalize' ? { number: await store().nextNumber(key.merchant, key.mode) } : {};
    const done = await d.host.apply({ kind: 'invoice', id }, { type: `invoice.${cmd}`, id: `${id}:${cmd}`, at, ...extra });
    // Another request moved it first (the status check above raced it).
    if (done.outcome === 'ignored') throw new AppError('invalid_invoice_status', `The invoice is ${done.status}.`);
    return render(done.snapshot.context, done.status);
  }

  /** The intent a customer pays the invoice through: the current one while it is payable, else a new one. */
  async function pay(inv: PublicInvoice): Promise<string> {
    const payee = await store().payee(inv.merchant, inv.mode);
    if (!payee || payee.status !== 'active') throw new AppError('forbidden', 'This merchant cannot take payments now.');
    if (!payee.payoutAddress) throw new AppError('payout_address_required');
    let ctx = inv.snapshot.context as InvoiceContext;
    let state = inv.state;
    // Two rounds at most: the attached intent may have expired since, then the next attempt is made.
    for (let round = 0; round < 3; round++) {
      if (state !== 'OPEN') throw new AppError('invalid_invoice_status', `This invoice is ${state}.`);
      if (ctx.payment_intent) {
        const current = await d.intents.byId(ctx.payment_intent);
        if (current && REUSABLE.has(current.state)) return ctx.payment_intent;
      }
      // Named by the invoice and the attempt: racing payers make (and attach) the same intent.
      const attempt = ctx.intents.length;
      const intentId = keyedId('pay_', d.pepper, ['invoice', inv.id, String(attempt)]);
      await d.host.apply({ kind: 'payment_intent', id: intentId, merchant: inv.merchant, mode: inv.mode }, await intentFor(ctx, intentId, payee));
      const r = await d.host.apply({ kind: 'invoice', id: inv.id }, { type: 'invoice.attach_intent', id: `${inv.id}:attach:${attempt}`, at: now(), intent_id: intentId, attempt });
      ctx = r.snapshot.context as InvoiceContext;
      state = r.status;
      if (state === 'OPEN' && ctx.payment_intent === intentId) {
        const made = await d.intents.byId(intentId);
        if (made && REUSABLE.has(made.state)) return intentId;
      }
    }
    throw new AppError('invalid_invoice_status', 'The invoice could not be paid now; reload the page.');
  }

  async function intentFor(ctx: InvoiceContext, intentId: string, payee: { payoutAddress: string | null; successUrl: string | null; cancelUrl: string | null }): Promise<IntentCreateEvent> {
    let anm: bigint;
    let quote = null;
    if (ctx.currency === 'ANM') anm = toMinor(ctx.total, decimalsOf('ANM')) ?? 0n;
    else {
      quote = await d.rates.quote(ctx.currency);
      if (!quote) throw new AppError('currency_unsupported');
      anm = fiatToNanm(ctx.total, quote.rate);
    }
    if (anm <= 0n || anm > MAX_NANM) throw new AppError('invalid_amount');
    const at = now();
    return {
      type: 'intent.create',
      id: `${intentId}:create`,
      at,
      intent_id: intentId,
      merchant_id: ctx.merchant_id,
      mode: ctx.mode,
      currency: ctx.currency,
      requested_amount: ctx.total,
      anm_amount: anm.toString(),
      merchant_order_id: null,
      description: ctx.number ? `Invoice ${ctx.number}` : 'Invoice',
      // Echoed on every payment webhook: the merchant sees which invoice a payment (or its reorg) belongs to.
      metadata: { invoice: ctx.invoice_id, ...(ctx.number ? { invoice_number: ctx.number } : {}) },
      success_url: payee.successUrl,
      cancel_url: payee.cancelUrl,
      payment_address: payee.payoutAddress!,
      treasury_address: d.treasury[ctx.mode],
      payment_reference: paymentReference(poolBytes(20)),
      expires_at: at + EXPIRY_MS,
      required_confirmations: DEFAULT_REQUIRED_CONFIRMATIONS,
      monitor_window_ms: DEFAULT_MONITOR_WINDOW_MS,
      quote,
      owner: { kind: 'invoice', id: ctx.invoice_id },
    };
  }

  return { create, own, get, list, command, pay, render };
}
