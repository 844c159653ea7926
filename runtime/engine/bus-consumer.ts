/**
 * Actor events delivered by the bus (`actor.>`): each is applied in order per actor, acked
 * once committed, redelivered after a back-off when the failure is retryable, and otherwise
 * reported as poison and acked, so one bad event never blocks its subject.
 */
import type { Bus, Subscription } from '../bus/types.ts';
import { ensureError } from '../errors.ts';
import type { ActorEnvelope, ActorTarget, ApplyResult } from './actor-types.ts';
import { isRetryable, redeliveryDelayMs } from './errors.ts';

export interface ConsumeOptions {
  concurrency?: number;
  durable?: string;
  ackWaitMs?: number;
}

export function consumeActorEvents(
  bus: Bus,
  applyInOrder: (target: ActorTarget, event: unknown) => Promise<ApplyResult>,
  onPoison: ((envelope: ActorEnvelope, err: Error) => void) | undefined,
  opts: ConsumeOptions = {},
): Promise<Subscription> {
  return bus.consume({
    durable: opts.durable ?? 'actor-host',
    subject: 'actor.>',
    concurrency: opts.concurrency ?? 32,
    ...(opts.ackWaitMs ? { ackWaitMs: opts.ackWaitMs } : {}),
    handler: async (msg) => {
      const env = msg.data as ActorEnvelope;
      try {
        await applyInOrder(env.target, env.event);
        msg.ack();
      } catch (thrown) {
        const err = ensureError(thrown);
        const delay = isRetryable(err) ? redeliveryDelayMs(msg.deliveries) : null;
        if (delay !== null) msg.nak(delay);
        else {
          onPoison?.(env, err);
          msg.ack();
        }
      }
    },
  });
}
