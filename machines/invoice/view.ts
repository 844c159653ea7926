import type { InvoiceContext } from './context.ts';
import { isOverdue } from './rules.ts';

export const INVOICE_STATUSES = ['DRAFT', 'OPEN', 'PAID', 'VOID', 'UNCOLLECTIBLE'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** `/i/{token}` once finalized; a draft has no public page. */
export const hostedPath = (c: InvoiceContext, status: string): string | null => (status === 'DRAFT' ? null : `/i/${c.token}`);

/** The Invoice resource (DESIGN §7 JSON names); `overdue` is derived from `due_at` at read time. */
export function invoiceResource(c: InvoiceContext, status: string, opts: { baseUrl: string; now: number }) {
  const path = hostedPath(c, status);
  return {
    id: c.invoice_id,
    object: 'invoice' as const,
    mode: c.mode,
    status,
    overdue: isOverdue(c, status, opts.now),
    number: c.number,
    customer_name: c.customer_name,
    customer_email: c.customer_email,
    line_items: c.line_items.map((l) => ({ description: l.description, quantity: l.quantity, unit_price: l.unit_price })),
    currency: c.currency,
    total: c.total,
    memo: c.memo,
    due_at: iso(c.due_at),
    hosted_url: path === null ? null : `${opts.baseUrl}${path}`,
    payment_intent: c.payment_intent,
    metadata: c.metadata,
    created_at: iso(c.created_at),
    finalized_at: iso(c.finalized_at),
    paid_at: iso(c.paid_at),
    voided_at: iso(c.voided_at),
    marked_uncollectible_at: iso(c.uncollectible_at),
  };
}

/**
 * Data of `invoice.paid` (docs/webhooks.md). It carries no time of its own (the envelope's
 * `created` has it), so the same intent settling again after a reorg names the same fact and
 * keeps the same event id: the merchant is told once per paying intent (ADR 0040).
 */
export function invoicePaidData(c: InvoiceContext, intent: string) {
  return {
    id: c.invoice_id,
    object: 'invoice',
    status: 'PAID',
    mode: c.mode,
    number: c.number,
    customer_name: c.customer_name,
    customer_email: c.customer_email,
    currency: c.currency,
    total: c.total,
    payment_intent: intent,
    hosted_url: `/i/${c.token}`,
    metadata: c.metadata,
  };
}
