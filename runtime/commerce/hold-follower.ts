/**
 * A hold follows its payment intent (DESIGN §7): the intent's facts already leave its
 * transaction as outbox rows (`fx.webhook.*`, every one carrying the creation metadata, which
 * names the hold), so a durable consumer of its own on that stream turns them into hold events.
 * The intent machine stays as it is, and a fact is forwarded at least once, under an id derived
 * from the fact, so the hold's dedupe makes it exactly once.
 */
import type { Bus, BusMessage, Subscription } from '../bus/types.ts';
import type { ActorTarget, ApplyResult } from '../engine/actor-types.ts';
import { isRetryable, redeliveryDelayMs } from '../engine/errors.ts';
import { ensureError } from '../errors.ts';
import type { WebhookFact } from '../webhooks/intake.ts';

const HOLD_ID = /^hold_[a-z2-7]{24}$/;

/** The hold event an intent fact means, or null for facts a hold does not care about. */
export function holdEventOf(fact: WebhookFact): { holdId: string; event: Record<string, unknown> & { type: string; id: string; at: number } } | null {
  if (fact.kind !== 'payment_intent') return null;
  const data = fact.event.data;
  const meta = data.metadata as Record<string, unknown> | undefined;
  const holdId = meta?.hold;
  if (typeof holdId !== 'string' || !HOLD_ID.test(holdId)) return null;
  const base = { id: `intent:${fact.event.id}`, at: fact.event.created * 1000 };
  switch (fact.event.type) {
    case 'payment.confirmed':
      return { holdId, event: { type: 'intent.paid', ...base } };
    case 'payment.expired':
      return { holdId, event: { type: 'intent.ended', ...base, reason: data.reason === 'canceled' ? 'canceled' : 'expired' } };
    case 'payment.failed':
      return { holdId, event: { type: 'intent.ended', ...base, reason: 'failed' } };
    case 'payment.underpaid':
      return { holdId, event: { type: 'intent.ended', ...base, reason: 'underpaid' } };
    default:
      return null;
  }
}

export interface HoldFollowerOptions {
  durable?: string;
  concurrency?: number;
  ackWaitMs?: number;
}

export async function startHoldFollower(
  bus: Bus,
  host: { applyInOrder(target: ActorTarget, event: unknown): Promise<ApplyResult> },
  opts: HoldFollowerOptions = {},
): Promise<Subscription> {
  const handle = async (msg: BusMessage) => {
    const found = holdEventOf(msg.data as WebhookFact);
    if (!found) return msg.ack();
    try {
      await host.applyInOrder({ kind: 'link_hold', id: found.holdId }, found.event);
      msg.ack();
    } catch (thrown) {
      const err = ensureError(thrown);
      // Retryable includes an unknown hold: it is created from its link's outbox, so a fact
      // may arrive before it exists.
      const delay = isRetryable(err) ? redeliveryDelayMs(msg.deliveries) : null;
      if (delay !== null) msg.nak(delay);
      else msg.ack();
    }
  };
  return bus.consume({
    durable: opts.durable ?? 'link-holds',
    subject: 'fx.webhook.>',
    concurrency: opts.concurrency ?? 64,
    ...(opts.ackWaitMs ? { ackWaitMs: opts.ackWaitMs } : {}),
    handler: handle,
  });
}
