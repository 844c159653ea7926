import type { InvoiceCreateEvent, LineItem } from './events.ts';
import { invoiceTotal } from './rules.ts';

export interface InvoiceContext {
  invoice_id: string;
  merchant_id: string;
  mode: 'live' | 'test';
  token: string;
  number: string | null;
  customer_name: string | null;
  customer_email: string | null;
  line_items: LineItem[];
  currency: string;
  /** Decimal string in `currency` units, fixed at creation (line items never change). */
  total: string;
  memo: string | null;
  due_at: number | null;
  metadata: Record<string, unknown>;
  created_at: number;
  finalized_at: number | null;
  paid_at: number | null;
  voided_at: number | null;
  uncollectible_at: number | null;
  /** The intent a customer is sent to now (the last one attached). */
  payment_intent: string | null;
  /** Every intent made for the invoice, oldest first: a late payment on any of them counts. */
  intents: string[];
  /** The intent whose settlement made the invoice PAID; cleared by its reorg. */
  paid_by: string | null;
  /** Intents that settled while the invoice was not OPEN (paid twice, or after void): the merchant refunds them. */
  extra_payments: string[];
  /** Per intent, the position of the newest notice applied: an older one arriving late is dropped. */
  notice_pos: Record<string, number>;
}

export function initialInvoiceContext(e: InvoiceCreateEvent): InvoiceContext {
  return {
    invoice_id: e.invoice_id,
    merchant_id: e.merchant_id,
    mode: e.mode,
    token: e.token,
    number: null,
    customer_name: e.customer_name,
    customer_email: e.customer_email,
    line_items: e.line_items,
    currency: e.currency,
    total: invoiceTotal(e.line_items, e.currency),
    memo: e.memo,
    due_at: e.due_at,
    metadata: e.metadata,
    created_at: e.at,
    finalized_at: null,
    paid_at: null,
    voided_at: null,
    uncollectible_at: null,
    payment_intent: null,
    intents: [],
    paid_by: null,
    extra_payments: [],
    notice_pos: {},
  };
}
