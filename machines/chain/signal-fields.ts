import { z } from 'zod';

/**
 * Zod fields of positional chain signals (ADR 0016), shared by every actor that watches the
 * chain. Optional: an indexer older than positions sends none, and its signals keep the
 * rules they had.
 */
const position = z.number().int().nonnegative();

/** On every chain signal: the indexer's position when the statement was true. */
export const positionField = { pos: position.optional() };

/** On `chain.block`: the position of the inclusion the report deepens. */
export const depthFields = { ...positionField, inclusion: position.optional() };

/** On `chain.reorged`: the block that left the chain. */
export const reorgFields = { ...positionField, block_hash: z.string().min(1).optional() };
