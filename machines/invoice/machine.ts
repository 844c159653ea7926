import { assertEvent, assign, setup } from 'xstate';
import { contextFrom } from '../kit/durable.ts';
import { effectActions } from '../kit/effects.ts';
import { initialInvoiceContext, type InvoiceContext } from './context.ts';
import type { InvoiceCreateEvent, InvoiceEvent } from './events.ts';
import * as rules from './rules.ts';
import { invoicePaidData } from './view.ts';

/**
 * The invoice (DESIGN §7): DRAFT → OPEN (finalized: number) → PAID / VOID / UNCOLLECTIBLE.
 * VOID and UNCOLLECTIBLE are terminal. PAID leaves only when a reorg reverses the settlement
 * that paid it (back to OPEN). Payment facts arrive from the invoice's payment intents as
 * events through the outbox; `invoice.paid` leaves as a webhook effect. A `{ guard: X }` with no
 * target and no actions is a blocker: it swallows the event (a stale notice) as not accepted.
 */
type Args = { context: InvoiceContext; event: InvoiceEvent };

const paidWebhook = {
  type: 'emitWebhook' as const,
  params: ({ context, event }: Args) => {
    assertEvent(event, 'intent.paid');
    return { type: 'invoice.paid', created: event.at, data: invoicePaidData(context, event.intent_id) };
  },
};
/** Closing an invoice cancels the intent a customer may still be looking at (only an unpaid one cancels). */
const cancelIntent = {
  type: 'sendTo' as const,
  params: ({ context, event }: Args) => ({
    kind: 'payment_intent',
    // An empty id sends nothing (machines/kit/effects.ts).
    actorId: context.payment_intent ?? '',
    event: { type: 'intent.cancel', id: `${context.invoice_id}:${event.type}:cancel`, at: event.at },
  }),
};

const inv = setup({
  types: { context: {} as InvoiceContext, events: {} as InvoiceEvent, input: {} as InvoiceCreateEvent },
  actions: {
    ...effectActions,
    finalize: assign(({ event }) => {
      assertEvent(event, 'invoice.finalize');
      return { number: event.number, finalized_at: event.at };
    }),
    attach: assign(({ context, event }) => {
      assertEvent(event, 'invoice.attach_intent');
      return { payment_intent: event.intent_id, intents: [...context.intents, event.intent_id] };
    }),
    markPaid: assign(({ event }) => {
      assertEvent(event, 'intent.paid');
      return { paid_by: event.intent_id, paid_at: event.at };
    }),
    noteExtra: assign(({ context, event }) => {
      assertEvent(event, 'intent.paid');
      return { extra_payments: [...context.extra_payments, event.intent_id] };
    }),
    reopen: assign({ paid_by: null, paid_at: null }),
    forgetExtra: assign(({ context, event }) => {
      assertEvent(event, 'intent.reorged');
      return { extra_payments: context.extra_payments.filter((i) => i !== event.intent_id) };
    }),
    notePos: assign(({ context, event }) => {
      if ((event.type !== 'intent.paid' && event.type !== 'intent.reorged') || event.pos === undefined) return {};
      return { notice_pos: { ...context.notice_pos, [event.intent_id]: event.pos } };
    }),
    markVoid: assign({ voided_at: ({ event }) => event.at }),
    markUncollectible: assign({ uncollectible_at: ({ event }) => event.at }),
  },
  guards: {
    attachesNext: ({ context, event }) => event.type === 'invoice.attach_intent' && rules.attachesNext(context, event),
    ownIntent: ({ context, event }) => event.type === 'intent.paid' && rules.ownIntent(context, event),
    newExtraPayment: ({ context, event }) => event.type === 'intent.paid' && rules.newExtraPayment(context, event),
    reversesPayment: ({ context, event }) => event.type === 'intent.reorged' && rules.reversesPayment(context, event),
    staleNotice: ({ context, event }) => (event.type === 'intent.paid' || event.type === 'intent.reorged') && rules.staleNotice(context, event),
    ownNews: ({ context, event }) => (event.type === 'intent.paid' || event.type === 'intent.reorged') && rules.ownNews(context, event),
    extraReorged: ({ context, event }) => event.type === 'intent.reorged' && context.extra_payments.includes(event.intent_id),
  },
});

/** In every state past OPEN: another settlement of one of its intents is recorded for a refund, and its reorg un-records it. */
const stale = { guard: 'staleNotice' as const };
/** News of one of its intents that moves nothing is still recorded, so an older notice arriving later is dropped. */
const news = { guard: 'ownNews' as const, actions: ['notePos' as const] };
const extras = {
  'intent.paid': [stale, { guard: 'newExtraPayment' as const, actions: ['noteExtra' as const, 'notePos' as const] }, news],
  'intent.reorged': [stale, { guard: 'extraReorged' as const, actions: ['forgetExtra' as const, 'notePos' as const] }, news],
};

export const invoiceMachine = inv.createMachine({
  id: 'invoice',
  initial: 'NEW',
  context: contextFrom(initialInvoiceContext),
  states: {
    NEW: { on: { 'invoice.create': { target: 'DRAFT' } } },
    DRAFT: {
      on: {
        'invoice.finalize': { target: 'OPEN', actions: ['finalize'] },
        'invoice.void': { target: 'VOID', actions: ['markVoid'] },
      },
    },
    OPEN: {
      on: {
        'invoice.attach_intent': { guard: 'attachesNext', actions: ['attach'] },
        'intent.paid': [stale, { guard: 'ownIntent', target: 'PAID', actions: ['markPaid', 'notePos', paidWebhook] }, news],
        'intent.reorged': extras['intent.reorged'],
        'invoice.void': { target: 'VOID', actions: ['markVoid', cancelIntent] },
        'invoice.mark_uncollectible': { target: 'UNCOLLECTIBLE', actions: ['markUncollectible', cancelIntent] },
      },
    },
    PAID: {
      on: {
        'intent.paid': extras['intent.paid'],
        'intent.reorged': [stale, { guard: 'reversesPayment', target: 'OPEN', actions: ['reopen', 'notePos'] }, ...extras['intent.reorged']],
      },
    },
    VOID: { on: extras },
    UNCOLLECTIBLE: { on: extras },
  },
});
