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

/** A block's matched transactions, `INCLUDED_CHUNK` per message; resolves once every message is acknowledged. */
export async function publishIncluded(bus: Bus, network: string, base: Omit<IncludedSignal, 'txs'>, txs: readonly IncludedTx[]): Promise<Published> {
  const sends: Promise<void>[] = [];
  for (let i = 0; i < txs.length; i += INCLUDED_CHUNK) {
    const signal: IncludedSignal = { ...base, txs: txs.slice(i, i + INCLUDED_CHUNK) };
    sends.push(bus.publish(includedSubject(network), signal, { msgId: includedMsgId(network, signal, i / INCLUDED_CHUNK) }));
  }
  await Promise.all(sends);
  return { messages: sends.length };
}

/**
 * A new head for every actor in the settlement window, `chunk` actors per message. The window
 * has no bound of its own: 12 blocks of a busy chain, or a catch-up of hundreds of blocks in
 * one tick, name tens of thousands of actors (~45 bytes each). `targets` must come in a stable
 * order, so that a tick re-publishing after a failure sends the same chunks under the same ids.
 */
export async function publishDepth(bus: Bus, network: string, base: Omit<BlockSignal, 'targets'>, targets: BlockSignal['targets'], chunk = BLOCK_SIGNAL_CHUNK): Promise<Published> {
  const sends: Promise<void>[] = [];
  for (let i = 0; i < targets.length; i += chunk) {
    const signal: BlockSignal = { ...base, targets: targets.slice(i, i + chunk) };
    sends.push(bus.publish(`chain.${network}.block`, signal, { msgId: blockMsgId(network, signal, targets.length, i / chunk) }));
  }
  await Promise.all(sends);
  return { messages: sends.length };
}
