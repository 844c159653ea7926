import { describe, expect, it } from 'vitest';
import { actorSubject } from '../bus/subjects.ts';
import { planEffects } from './effect-plan.ts';

const owner = { merchant: 'mer_1', mode: 'live' as const };

describe('planEffects', () => {
  it('keeps the last operation per timer name and spends the fired timer unless it is scheduled again', () => {
    const p = planEffects('payment_intent', 'pay_1', 4, [
      { type: 'scheduleTimer', params: { name: 'expire', at: 1_000, event: 'timer.expire' } },
      { type: 'cancelTimer', params: { name: 'expire' } },
      { type: 'cancelTimer', params: { name: 'remind' } },
      { type: 'scheduleTimer', params: { name: 'remind', at: 2_000, event: 'timer.remind' } },
    ], owner, 'grace');
    expect(p.timerUpserts).toEqual([{ name: 'remind', kind: 'payment_intent', event_type: 'timer.remind', fire_at: new Date(2_000).toISOString(), generation: 4 }]);
    expect(p.timerDeletes.sort()).toEqual(['expire', 'grace']);
    expect(p.outbox).toEqual([]);

    const again = planEffects('payment_intent', 'pay_1', 5, [{ type: 'scheduleTimer', params: { name: 'grace', at: 3_000, event: 'timer.grace' } }], owner, 'grace');
    expect(again.timerDeletes).toEqual([]);
    expect(again.timerUpserts.map((t) => [t.name, t.generation])).toEqual([['grace', 5]]);
  });

  it('names outbox rows by actor, version and position, so a retried step publishes under the same ids', () => {
    const fx = [
      { type: 'emitWebhook' as const, params: { type: 'payment.confirmed', created: 1_700_000_000_500, data: { id: 'pay_1' } } },
      { type: 'sendTo' as const, params: { kind: 'refund', actorId: 're_1', event: { type: 'refund.settle', id: 'ev_9', at: 1 } } },
    ];
    const a = planEffects('payment_intent', 'pay_1', 7, fx, owner, null);
    const b = planEffects('payment_intent', 'pay_1', 7, fx, owner, null);
    expect(a).toEqual(b);
    expect(a.outbox.map((r) => [r.msg_id, r.subject])).toEqual([
      ['pay_1:7:0', 'fx.webhook.live'],
      ['ev_9', actorSubject('refund', 're_1')],
    ]);
    const hook = a.outbox[0]!.payload as { merchant: string; event: { id: string; created: number; type: string } };
    expect(hook.merchant).toBe('mer_1');
    expect(hook.event).toMatchObject({ type: 'payment.confirmed', created: 1_700_000_000 });
    expect(hook.event.id).toMatch(/^evt_/);
  });
});
