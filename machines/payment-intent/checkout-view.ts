import { FEE_BPS, formatAnm } from '../money/money.ts';
import type { PaymentIntentContext } from './context.ts';
import { paymentUri } from './payment-uri.ts';
import { SETTLED_STATES, shortfall, watchUntil } from './rules.ts';

/**
 * What the hosted checkout shows, rendered from the snapshot like every other public shape
 * (`view.ts`). The page and its `/c/{id}/events` stream render only through these, so the
 * browser never derives domain state: it is told the status, the depth, whether anything more
 * can happen (`final`) and which link to offer. Documented in docs/checkout.md.
 */

/** Why a pre-settlement or settled intent went back to AWAITING_PAYMENT on this change. */
export type CheckoutNotice = 'reorged' | 'dropped';

/** The live part: one SSE event's data, and `status` in the page's initial JSON. */
export interface CheckoutStatusView {
  /** Actor version of the snapshot this view renders; the SSE event id. */
  version: number;
  status: string;
  confirmations: number;
  required_confirmations: number;
  transaction_hash: string | null;
  expires_at: string;
  /** Only while PAID: where to send the customer afterwards. */
  success_url: string | null;
  notice: CheckoutNotice | null;
  /** UNDERPAID: what the matched transaction lacks over both legs (nANM). */
  shortfall: string | null;
  shortfall_formatted: string | null;
  /** Above `anm_amount` (OVERPAID, or PAID after an overpayment). */
  excess: string | null;
  excess_formatted: string | null;
  /** A payment sent now can still satisfy the intent: the page offers the QR code and URI. */
  payable: boolean;
  /** Nothing more will be streamed for this intent (docs/checkout.md "Final states"). */
  final: boolean;
}

/** The rest of the page: fixed for the life of the intent. */
export interface CheckoutIntentView {
  id: string;
  mode: 'live' | 'test';
  currency: string;
  requested_amount: string | null;
  anm_amount: string;
  anm_amount_formatted: string;
  /** The total in ANM as a plain decimal (`1234.5`: no grouping, no unit), for wallets that take ANM. */
  anm_amount_decimal: string;
  merchant_amount: string;
  merchant_amount_formatted: string;
  protocol_fee: string;
  protocol_fee_formatted: string;
  protocol_fee_bps: number;
  payment_address: string;
  treasury_address: string;
  payment_reference: string;
  payment_uri: string;
  description: string | null;
  /** Fiat intents: the charge as requested and the locked rate (price of 1 ANM). */
  fiat: { amount: string; currency: string; rate: string } | null;
  cancel_url: string | null;
}

export interface CheckoutPageView {
  intent: CheckoutIntentView;
  merchant: { name: string };
  status: CheckoutStatusView;
}

/** Exact decimal ANM as a wallet's amount field takes it: `formatAnm` without grouping or unit. */
function plainAnm(nanm: bigint): string {
  return formatAnm(nanm).slice(0, -' ANM'.length).replaceAll(',', '');
}

/** An absolute http(s) URL, or null: only such links are ever put in front of a customer. */
export function safeHttpUrl(u: string | null): string | null {
  if (!u) return null;
  try {
    const parsed = new URL(u);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
  } catch {
    return null;
  }
}

const SETTLED: readonly string[] = SETTLED_STATES;

/**
 * When the page stops listening: `0` for now, a Unix ms time for "at the end of the
 * late-payment watch", `null` while more can happen. Settled intents are final (a later reorg
 * is the merchant's business, told by the `payment.reorged` webhook); an underpaid
 * transaction is final once it is as deep as a settlement would be; expired and failed
 * intents stay open while a late transaction can still match them.
 */
export function checkoutFinalAt(ctx: PaymentIntentContext, status: string): number | null {
  if (SETTLED.includes(status)) return 0;
  if (status === 'UNDERPAID') return ctx.confirmations >= ctx.required_confirmations ? 0 : null;
  if (status === 'EXPIRED' || status === 'FAILED') return watchUntil(ctx);
  return null;
}

export function isCheckoutFinal(ctx: PaymentIntentContext, status: string, now: number): boolean {
  const at = checkoutFinalAt(ctx, status);
  return at !== null && at <= now;
}

function noticeOf(status: string, event: string | undefined): CheckoutNotice | null {
  if (status !== 'AWAITING_PAYMENT') return null;
  if (event === 'chain.reorged') return 'reorged';
  if (event === 'chain.tx.dropped') return 'dropped';
  return null;
}

export function toCheckoutStatus(ctx: PaymentIntentContext, status: string, opts: { version: number; event?: string | undefined; now: number }): CheckoutStatusView {
  const short = status === 'UNDERPAID' && ctx.tx ? shortfall(ctx, ctx.tx) : null;
  const excess = BigInt(ctx.excess) > 0n && (status === 'OVERPAID' || SETTLED.includes(status)) ? BigInt(ctx.excess) : null;
  return {
    version: opts.version,
    status,
    confirmations: ctx.confirmations,
    required_confirmations: ctx.required_confirmations,
    transaction_hash: ctx.tx?.hash ?? null,
    expires_at: new Date(ctx.expires_at).toISOString(),
    success_url: status === 'PAID' ? safeHttpUrl(ctx.success_url) : null,
    notice: noticeOf(status, opts.event),
    shortfall: short === null ? null : short.toString(),
    shortfall_formatted: short === null ? null : formatAnm(short),
    excess: excess === null ? null : excess.toString(),
    excess_formatted: excess === null ? null : formatAnm(excess),
    // FAILED does not consume the reference (DESIGN §4): another transaction may still pay.
    payable: status === 'AWAITING_PAYMENT' || (status === 'FAILED' && opts.now <= watchUntil(ctx)),
    final: isCheckoutFinal(ctx, status, opts.now),
  };
}

/** Whether `next` shows the customer anything `prev` did not (status, depth, deadline, tx). */
export function checkoutChanged(prev: CheckoutStatusView | null, next: CheckoutStatusView): boolean {
  if (!prev) return true;
  return (
    prev.status !== next.status ||
    prev.confirmations !== next.confirmations ||
    prev.transaction_hash !== next.transaction_hash ||
    prev.expires_at !== next.expires_at ||
    prev.final !== next.final ||
    prev.payable !== next.payable ||
    prev.notice !== next.notice
  );
}

export function toCheckoutIntent(ctx: PaymentIntentContext): CheckoutIntentView {
  return {
    id: ctx.intent_id,
    mode: ctx.mode,
    currency: ctx.currency,
    requested_amount: ctx.requested_amount,
    anm_amount: ctx.anm_amount,
    anm_amount_formatted: formatAnm(BigInt(ctx.anm_amount)),
    anm_amount_decimal: plainAnm(BigInt(ctx.anm_amount)),
    merchant_amount: ctx.merchant_amount,
    merchant_amount_formatted: formatAnm(BigInt(ctx.merchant_amount)),
    protocol_fee: ctx.protocol_fee,
    protocol_fee_formatted: formatAnm(BigInt(ctx.protocol_fee)),
    protocol_fee_bps: FEE_BPS,
    payment_address: ctx.payment_address,
    treasury_address: ctx.treasury_address,
    payment_reference: ctx.payment_reference,
    payment_uri: paymentUri(ctx),
    description: ctx.description,
    fiat: ctx.currency !== 'ANM' && ctx.quote && ctx.requested_amount !== null ? { amount: ctx.requested_amount, currency: ctx.currency, rate: ctx.quote.rate } : null,
    cancel_url: safeHttpUrl(ctx.cancel_url),
  };
}

export function toCheckoutPage(
  ctx: PaymentIntentContext,
  status: string,
  opts: { version: number; merchantName: string; now: number },
): CheckoutPageView {
  return {
    intent: toCheckoutIntent(ctx),
    merchant: { name: opts.merchantName },
    status: toCheckoutStatus(ctx, status, { version: opts.version, now: opts.now }),
  };
}
