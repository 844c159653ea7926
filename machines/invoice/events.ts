import { z } from 'zod';
import { codePoints } from '../kit/text.ts';

/**
 * Events of the invoice actor (DESIGN §7 "Invoices"). Commands come from the API and the
 * dashboard (`invoice.*`); facts about its payment intents come from those intents' actors
 * through the outbox (`intent.paid`, `intent.reorged`). The gateway validates the request
 * bodies with the spec's codes first; these schemas are the engine's last word on shape.
 */
const base = { id: z.string().min(1), at: z.number().int().nonnegative() };
const text = (max: number) => z.string().refine((s) => codePoints(s) <= max, `at most ${max} characters`);

export const LINE_ITEMS_MAX = 100;
export const INVOICE_LIMITS = { customer_name: 200, customer_email: 254, description: 500, memo: 1000, quantity: 1_000_000 } as const;

export const lineItem = z.object({
  description: text(INVOICE_LIMITS.description).pipe(z.string().min(1)),
  quantity: z.number().int().min(1).max(INVOICE_LIMITS.quantity),
  /** Decimal string in `currency` units, as an intent's `amount`. */
  unit_price: z.string().regex(/^[0-9]+(\.[0-9]+)?$/),
});

export const invoiceCreate = z.object({
  type: z.literal('invoice.create'),
  ...base,
  invoice_id: z.string().regex(/^inv_[a-z2-7]+$/),
  merchant_id: z.string().min(1),
  mode: z.enum(['live', 'test']),
  /** The `/i/{token}` capability, drawn when the draft is made and shown once it is finalized. */
  token: z.string().regex(/^[a-z2-7]{32,}$/),
  customer_name: text(INVOICE_LIMITS.customer_name).nullable().default(null),
  customer_email: text(INVOICE_LIMITS.customer_email).nullable().default(null),
  line_items: z.array(lineItem).min(1).max(LINE_ITEMS_MAX),
  currency: z.string().regex(/^(ANM|[A-Z]{3})$/),
  memo: text(INVOICE_LIMITS.memo).nullable().default(null),
  /** Unix milliseconds. */
  due_at: z.number().int().nonnegative().nullable().default(null),
  metadata: z.record(z.string(), z.unknown()).default({}),
});

/** `number` comes from the merchant's sequence, allocated by the runtime before the event. */
export const invoiceFinalize = z.object({ type: z.literal('invoice.finalize'), ...base, number: z.string().min(1) });
export const invoiceVoid = z.object({ type: z.literal('invoice.void'), ...base });
export const invoiceUncollectible = z.object({ type: z.literal('invoice.mark_uncollectible'), ...base });
/** A payment intent made for the invoice; `attempt` is the count of intents before it, so two racing payers name the same one. */
export const invoiceAttach = z.object({ type: z.literal('invoice.attach_intent'), ...base, intent_id: z.string().min(1), attempt: z.number().int().nonnegative() });
/** `pos`: the position of the chain signal behind the notice (ADR 0016); notices about one intent apply in position order. */
const notice = { ...base, intent_id: z.string().min(1), pos: z.number().int().nonnegative().optional() };
export const intentPaid = z.object({ type: z.literal('intent.paid'), ...notice });
export const intentReorged = z.object({ type: z.literal('intent.reorged'), ...notice });

export const invoiceEvents = z.discriminatedUnion('type', [invoiceCreate, invoiceFinalize, invoiceVoid, invoiceUncollectible, invoiceAttach, intentPaid, intentReorged]);

export type InvoiceEvent = z.infer<typeof invoiceEvents>;
export type InvoiceCreateEvent = z.infer<typeof invoiceCreate>;
export type LineItem = z.infer<typeof lineItem>;
