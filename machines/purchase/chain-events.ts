import { z } from 'zod';
import { depthFields, positionField, reorgFields } from '../chain/signal-fields.ts';

/**
 * Chain signals a purchase on the ANM lane receives (DESIGN §3, ADR 0016): the indexer
 * matches the legs' references `mp1:<intent>:<leg>` and sends the same shapes as to payment
 * intents and refunds. The purchase tells its legs apart by transaction hash.
 */
const nanm = z.string().regex(/^[0-9]+$/);
const base = { id: z.string().min(1), at: z.number().int().nonnegative() };
const tx = { tx_hash: z.string().min(1), from: z.string().min(1), merchant_leg: nanm, fee_leg: nanm };

export const chainSeen = z.object({ type: z.literal('chain.tx.seen'), ...base, ...tx, ...positionField });
export const chainIncluded = z.object({
  type: z.literal('chain.tx.included'),
  ...base,
  ...tx,
  block_height: z.number().int().nonnegative(),
  block_hash: z.string().min(1),
  receipt: z.enum(['success', 'failed']),
  head: z.number().int().nonnegative(),
  ...positionField,
});
export const chainBlock = z.object({ type: z.literal('chain.block'), ...base, head: z.number().int().nonnegative(), ...depthFields });
export const chainReorged = z.object({ type: z.literal('chain.reorged'), ...base, tx_hash: z.string().min(1), head: z.number().int().nonnegative(), ...reorgFields });
export const chainDropped = z.object({ type: z.literal('chain.tx.dropped'), ...base, tx_hash: z.string().min(1), ...positionField });

export const purchaseChainEvents = [chainSeen, chainIncluded, chainBlock, chainReorged, chainDropped] as const;
export type PurchaseChainEvent = z.infer<(typeof purchaseChainEvents)[number]>;
