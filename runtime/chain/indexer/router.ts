import type { Bus, Subscription } from '../../bus/types.ts';
import type { ActorEnvelope, ActorHost } from '../../engine/actor-host.ts';
import type { BlockSignal } from './indexer.ts';

/**
 * Turns chain signals (`chain.<network>.*`, already matched to an actor by the indexer) into
 * actor events: apply in one transaction, ack after commit, redeliver on a retryable failure.
 */
export async function startChainRouter(bus: Bus, host: ActorHost, opts: { concurrency?: number; onPoison?: (env: ActorEnvelope, err: unknown) => void } = {}): Promise<Subscription> {
  return bus.consume({
    durable: 'chain-router',
    subject: 'chain.>',
    concurrency: opts.concurrency ?? 32,
    handler: async (msg) => {
      const env = msg.data as ActorEnvelope;
      try {
        if (msg.subject.endsWith('.block')) {
          const b = msg.data as BlockSignal;
          const event = { type: 'chain.block', id: `blk:${b.head}:${b.hash}`, at: b.at, head: b.head };
          await Promise.all(b.targets.map((t) => host.applyInOrder(t, event)));
        } else {
          await host.applyInOrder(env.target, env.event);
        }
        msg.ack();
      } catch (err) {
        const retryable = typeof err === 'object' && err !== null && 'retryable' in err ? Boolean(err.retryable) : true;
        if (retryable && msg.deliveries < 40) msg.nak(Math.min(30_000, 100 * 2 ** Math.min(msg.deliveries, 9)));
        else {
          opts.onPoison?.(env, err);
          msg.ack();
        }
      }
    },
  });
}
