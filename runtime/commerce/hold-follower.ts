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

/**
 * The hold events an intent fact means, one per hold the intent names (`hold` from a Pay page,
 * `holds` from a till's cart with limited products), or none for facts a hold does not care about.
 */
export function holdEventsOf(fact: WebhookFact): Array<{ holdId: string; event: Record<string, unknown> & { type: string; id: string; at: number } }> {
  if (fact.kind !== 'payment_intent') return [];
  const data = fact.event.data;
  const meta = data.metadata as Record<string, unknown> | undefined;
  const named = [meta?.hold, ...(Array.isArray(meta?.holds) ? (meta.holds as unknown[]) : [])];
  const holds = named.filter((h): h is string => typeof h === 'string' && HOLD_ID.test(h));
  if (holds.length === 0) return [];
  const base = { id: `intent:${fact.event.id}`, at: fact.event.created * 1000 };
  let event: Record<string, unknown> & { type: string; id: string; at: number };
  switch (fact.event.type) {
    case 'payment.confirmed':
      event = { type: 'intent.paid', ...base };
      break;
    case 'payment.expired':
      event = { type: 'intent.ended', ...base, reason: data.reason === 'canceled' ? 'canceled' : 'expired' };
      break;
    case 'payment.failed':
      event = { type: 'intent.ended', ...base, reason: 'failed' };
      break;
    case 'payment.underpaid':
      event = { type: 'intent.ended', ...base, reason: 'underpaid' };
      break;
    default:
      return [];
  }
  return [...new Set(holds)].map((holdId) => ({ holdId, event }));
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
    const found = holdEventsOf(msg.data as WebhookFact);
    // Every hold of the fact is told before the ack; a redelivery repeats them all, and each
    // hold's dedupe drops what it already applied.
    const failed = (await Promise.allSettled(found.map((f) => host.applyInOrder({ kind: 'link_hold', id: f.holdId }, f.event))))
      .flatMap((r) => (r.status === 'rejected' ? [ensureError(r.reason)] : []));
    // Retryable includes an unknown hold: it is created from its link's outbox, so a fact may
    // arrive before it exists.
    const delay = failed.some((err) => isRetryable(err)) ? redeliveryDelayMs(msg.deliveries) : null;
    if (delay !== null) msg.nak(delay);
    else msg.ack();
  };
  return bus.consume({
    durable: opts.durable ?? 'link-holds',
    subject: 'fx.webhook.>',
    concurrency: opts.concurrency ?? 64,
    ...(opts.ackWaitMs ? { ackWaitMs: opts.ackWaitMs } : {}),
    handler: handle,
  });
}
