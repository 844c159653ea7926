import { listingDefinition } from '../machines/listing/definition.ts';
import { purchaseDefinition } from '../machines/purchase/definition.ts';
import { paymentIntentDefinition } from '../machines/payment-intent/definition.ts';
import { refundDefinition } from '../machines/refund/definition.ts';
import { paymentIntentRefs, purchaseRefs, refundRefs } from './chain/chain-refs.ts';
import { MachineRegistry } from './engine/registry.ts';

/** Every durable machine this service hosts, each with the rows written when one is created. */
export function machineRegistry(): MachineRegistry {
  return new MachineRegistry().register(paymentIntentDefinition, paymentIntentRefs).register(refundDefinition, refundRefs).register(listingDefinition).register(purchaseDefinition, purchaseRefs);
}
