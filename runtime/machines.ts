import { paymentIntentDefinition } from '../machines/payment-intent/definition.ts';
import { refundDefinition } from '../machines/refund/definition.ts';
import { MachineRegistry } from './engine/registry.ts';

/** Every durable machine this service hosts. */
export function machineRegistry(): MachineRegistry {
  return new MachineRegistry([paymentIntentDefinition, refundDefinition]);
}
