/**
 * Effects a durable machine may ask for. They are XState actions with no implementation:
 * `transition()` returns them with their params and the runtime writes them as rows in the
 * same transaction as the new snapshot.
 */
export interface EmitWebhookParams {
  /** Event type, e.g. `payment.confirmed`. */
  type: string;
  /** Unix milliseconds when the fact happened. */
  created: number;
  data: Record<string, unknown>;
}

export interface ScheduleTimerParams {
  name: string;
  /** Unix milliseconds. */
  at: number;
  /** Event type delivered when the timer fires. */
  event: string;
}

export interface CancelTimerParams {
  name: string;
}

export interface SendToParams {
  kind: string;
  /** The recipient; an empty string sends nothing (an optional recipient, such as an intent's owner). */
  actorId: string;
  event: Record<string, unknown> & { type: string; id: string; at: number };
}

/** Placeholders for `setup({ actions })`: the machine names them, the runtime performs them. */
export const effectActions = {
  emitWebhook: (_: unknown, _params: EmitWebhookParams) => undefined,
  scheduleTimer: (_: unknown, _params: ScheduleTimerParams) => undefined,
  cancelTimer: (_: unknown, _params: CancelTimerParams) => undefined,
  sendTo: (_: unknown, _params: SendToParams) => undefined,
};

export type EffectAction =
  | { type: 'emitWebhook'; params: EmitWebhookParams }
  | { type: 'scheduleTimer'; params: ScheduleTimerParams }
  | { type: 'cancelTimer'; params: CancelTimerParams }
  | { type: 'sendTo'; params: SendToParams };

const EFFECT_TYPES = new Set(Object.keys(effectActions));

/** Keeps only the effect actions from what `transition()` returned, stripped to type + params. */
export function effectsOf(actions: ReadonlyArray<{ type: string; params?: unknown }>): EffectAction[] {
  return (
    actions
      .filter((a) => EFFECT_TYPES.has(a.type))
      // A `sendTo` with an empty recipient is no effect at all (an intent with no owner).
      .filter((a) => a.type !== 'sendTo' || (a.params as SendToParams | undefined)?.actorId !== '')
      .map((a) => ({ type: a.type, params: a.params }) as EffectAction)
  );
}
