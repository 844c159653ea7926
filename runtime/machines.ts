import { listingDefinition } from '../machines/listing/definition.ts';
import { linkHoldDefinition } from '../machines/link-hold/definition.ts';
import { paymentLinkDefinition } from '../machines/payment-link/definition.ts';
import { purchaseDefinition } from '../machines/purchase/definition.ts';
import { paymentIntentDefinition } from '../machines/payment-intent/definition.ts';
import { refundDefinition } from '../machines/refund/definition.ts';
import { invoiceDefinition } from '../machines/invoice/definition.ts';
import { invoiceTokenRow } from './commerce/invoice-rows.ts';
import { paymentIntentRefs, purchaseRefs, refundRefs } from './chain/chain-refs.ts';
import { linkHoldIndex, paymentLinkIndex } from './commerce/link-index.ts';
import { MachineRegistry } from './engine/registry.ts';

/** Every durable machine this service hosts, each with the rows written when one is created. */
export function machineRegistry(): MachineRegistry {
  return new MachineRegistry()
    .register(paymentIntentDefinition, paymentIntentRefs)
    .register(refundDefinition, refundRefs)
    .register(listingDefinition)
    // A purchase is created by its quote, which charges nothing: a quote lost in a crash of
    // PostgreSQL costs the buyer another quote, and every later write of the purchase is a
    // durable commit that flushes it first (ADR 0064). A routed execution's EXECUTING does not
    // wait for the disk either: the fee moves only after the answer's record, a durable commit
    // on the same actor that flushes it; lost in a crash of PostgreSQL, it leaves the intent
    // QUOTED with nothing taken (ADR 0074).
    .register(purchaseDefinition, purchaseRefs, { asyncCommit: true, asyncEvents: ['purchase.execute'] })
    .register(paymentLinkDefinition, paymentLinkIndex)
    .register(linkHoldDefinition, linkHoldIndex)
    .register(invoiceDefinition, invoiceTokenRow);
}
