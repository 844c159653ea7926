import type { Bus, Subscription } from '../../bus/types.ts';
import type { ActorHost } from '../../engine/actor-host.ts';
import type { ActorEnvelope } from '../../engine/actor-types.ts';
import { isRetryable, redeliveryDelayMs } from '../../engine/errors.ts';
import { ensureError } from '../../errors.ts';
import { signalEnvelopes } from './signals.ts';

/**
 * Turns chain signals (`chain.<network>.*`, already matched to actors by the indexer) into
 * actor events: apply each in its own transaction, ack after every one committed, redeliver
 * on a retryable failure. A redelivered signal re-applies events that already committed;
 * actors drop those by event id.
 */
export async function startChainRouter(bus: Bus, host: ActorHost, opts: { concurrency?: number; ackWaitMs?: number; onPoison?: (env: ActorEnvelope, err: Error) => void } = {}): Promise<Subscription> {
  return bus.consume({
    durable: 'chain-router',
    subject: 'chain.>',
    concurrency: opts.concurrency ?? 32,
    ...(opts.ackWaitMs ? { ackWaitMs: opts.ackWaitMs } : {}),
    handler: async (msg) => {
      let envelopes: ActorEnvelope[];
      try {
        envelopes = signalEnvelopes(msg.subject, msg.data);
      } catch (thrown) {
        opts.onPoison?.(msg.data as ActorEnvelope, ensureError(thrown));
        msg.ack();
        return;
      }
      const results = await Promise.allSettled(envelopes.map((env) => host.applyInOrder(env.target, env.event)));
      const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ env: envelopes[i]!, err: ensureError(r.reason) }] : []));
      // One retryable failure sends the whole signal back; the ones that committed are dedupes then.
      const delay = failed.some((f) => isRetryable(f.err)) ? redeliveryDelayMs(msg.deliveries) : null;
      if (delay !== null) {
        msg.nak(delay);
        return;
      }
      for (const f of failed) opts.onPoison?.(f.env, f.err);
      msg.ack();
    },
  });
}
