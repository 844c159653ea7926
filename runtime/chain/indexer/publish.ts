/**
 * The indexer's many-actor signals on the bus, cut into messages that stay far below NATS's
 * default 1 MB payload limit. A signal over the limit is refused by the client, so one that
 * grew with the chain's traffic would fail its tick every time and stall the indexer for good.
 */
import type { Bus } from '../../bus/types.ts';
import { BLOCK_SIGNAL_CHUNK, INCLUDED_CHUNK, blockMsgId, includedMsgId, includedSubject, type BlockSignal, type IncludedSignal, type IncludedTx } from './signals.ts';

interface Published {
  /** Bus messages sent (and acknowledged). */
  messages: number;
}

/** `items` in messages of `size`, each made by `message` from its slice and position; resolves once all are acknowledged. */
async function publishChunks<T>(bus: Bus, subject: string, items: readonly T[], size: number, message: (slice: T[], chunk: number) => { data: unknown; msgId: string }): Promise<Published> {
  const sends: Promise<void>[] = [];
  for (let i = 0; i < items.length; i += size) {
    const m = message(items.slice(i, i + size), i / size);
    sends.push(bus.publish(subject, m.data, { msgId: m.msgId }));
  }
  await Promise.all(sends);
  return { messages: sends.length };
}

/** A block's matched transactions, `INCLUDED_CHUNK` per message. */
export function publishIncluded(bus: Bus, network: string, base: Omit<IncludedSignal, 'txs'>, txs: readonly IncludedTx[]): Promise<Published> {
  return publishChunks(bus, includedSubject(network), txs, INCLUDED_CHUNK, (slice, chunk) => {
    const signal: IncludedSignal = { ...base, txs: slice };
    return { data: signal, msgId: includedMsgId(network, signal, chunk) };
  });
}

/**
 * A new head for every actor in the settlement window, `chunk` actors per message. The window
 * has no bound of its own: 12 blocks of a busy chain, or a catch-up of hundreds of blocks in
 * one tick, name tens of thousands of actors (~45 bytes each). `targets` must come in a stable
 * order, so that a tick re-publishing after a failure sends the same chunks under the same ids.
 */
export function publishDepth(bus: Bus, network: string, base: Omit<BlockSignal, 'targets'>, targets: BlockSignal['targets'], size = BLOCK_SIGNAL_CHUNK): Promise<Published> {
  return publishChunks(bus, `chain.${network}.block`, targets, size, (slice, chunk) => {
    const signal: BlockSignal = { ...base, targets: slice };
    return { data: signal, msgId: blockMsgId(network, signal, targets.length, chunk) };
  });
}
