import type { EffectAction } from '../../machines/kit/effects.ts';
import { actorSubject } from '../bus/subjects.ts';
import { webhookEventId } from './webhook-id.ts';

export interface OutboxRow {
  msg_id: string;
  subject: string;
  payload: unknown;
}

export interface TimerRow {
  name: string;
  kind: string;
  event_type: string;
  fire_at: string;
  generation: number;
}

export interface EffectPlan {
  outbox: OutboxRow[];
  timerUpserts: TimerRow[];
  timerDeletes: string[];
}

/**
 * Turns a step's effect actions into the rows its transaction writes: outbox rows (webhooks,
 * events for other actors) and net timer operations, the last operation per timer name
 * winning. The timer that just fired (`firedTimer`) is spent unless the step schedules it again.
 */
export function planEffects(
  kind: string,
  actorId: string,
  version: number,
  effects: EffectAction[],
  owner: { merchant: string | null; mode: string | null },
  firedTimer: string | null,
): EffectPlan {
  const outbox: OutboxRow[] = [];
  const timers = new Map<string, TimerRow | null>();
  if (firedTimer) timers.set(firedTimer, null);
  effects.forEach((fx, i) => {
    // Derived from the actor version, so a retried transaction publishes under the same id.
    const msgId = `${actorId}:${version}:${i}`;
    switch (fx.type) {
      case 'emitWebhook': {
        const id = webhookEventId(owner.merchant ?? '', fx.params.type, fx.params.data);
        const envelope = { id, type: fx.params.type, created: Math.floor(fx.params.created / 1000), data: fx.params.data };
        outbox.push({ msg_id: msgId, subject: `fx.webhook.${owner.mode ?? 'test'}`, payload: { merchant: owner.merchant, mode: owner.mode, actor_id: actorId, kind, event: envelope } });
        break;
      }
      case 'sendTo':
        outbox.push({ msg_id: fx.params.event.id, subject: actorSubject(fx.params.kind, fx.params.actorId), payload: { target: { kind: fx.params.kind, id: fx.params.actorId }, event: fx.params.event } });
        break;
      case 'scheduleTimer':
        timers.set(fx.params.name, { name: fx.params.name, kind, event_type: fx.params.event, fire_at: new Date(fx.params.at).toISOString(), generation: version });
        break;
      case 'cancelTimer':
        timers.set(fx.params.name, null);
        break;
    }
  });
  const timerUpserts = [...timers.values()].filter((t): t is TimerRow => t !== null);
  const timerDeletes = [...timers.entries()].filter(([, t]) => t === null).map(([n]) => n);
  return { outbox, timerUpserts, timerDeletes };
}

/** An effect's row as JSON with its actor's id first, for statements that write several actors' rows (create-batch.ts, update-batch.ts). */
export function ownedRowJson(actorId: string, row: OutboxRow | TimerRow): string {
  // Each row is an object with at least one key: the actor's id goes before its first.
  return `{"actor_id":${JSON.stringify(actorId)},${JSON.stringify(row).slice(1)}`;
}
