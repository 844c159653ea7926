/**
 * Replay-verify (issue 24: "a verify action that replays the journal and shows whether it
 * equals the stored snapshot"): for journals that take a payment intent into each of its
 * states, and for a refund, the replay equals the snapshot the engine's own steps produced;
 * a deliberately corrupted snapshot, a dropped journal entry or a machine that rejects the
 * journal make it say different and where.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, step, type PersistedSnapshot } from '../../machines/kit/step.ts';
import type { DurableMachine, EventBase } from '../../machines/kit/durable.ts';
import { MIN, T0, block, cancel, createEvent, dropped, included, pathTo, reorged, seen, timer } from '../../test/fixtures/payment-intent.ts';
import { machineRegistry } from '../machines.ts';
import { firstDifference, verifyReplay, type VerifyInput } from './verify.ts';

const registry = machineRegistry();
const pi = registry.get('payment_intent');

/** What the engine stores: each accepted step's snapshot, as JSON from the database would give it back. */
function stored(def: DurableMachine, events: readonly EventBase[]): VerifyInput {
  let snap: PersistedSnapshot = create(def, events[0]!).snapshot;
  const journal = [events[0]!];
  for (const e of events.slice(1)) {
    const r = step(def, snap, e);
    if (!r.accepted) continue; // not journaled
    snap = r.snapshot;
    journal.push(e);
  }
  return {
    id: 'pay_test',
    kind: def.kind,
    version: journal.length,
    machine_version: def.version,
    snapshot: JSON.parse(JSON.stringify(snap)) as PersistedSnapshot,
    events: journal.map((e) => ({ event: JSON.parse(JSON.stringify(e)) as Record<string, unknown> })),
  };
}

describe('replay-verify', () => {
  it.each(['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID', 'UNDERPAID', 'FAILED', 'EXPIRED', 'PAID'])('a payment intent journal into %s replays to the stored snapshot', (status) => {
    const input = stored(pi, pathTo(status));
    const r = verifyReplay(registry, input);
    expect(r).toMatchObject({ equal: true, difference: null, error: null, events: input.events.length, kind: 'payment_intent' });
    expect(input.snapshot.value).toBe(status);
  });

  it('a corrupted snapshot is different, at the path that was changed', () => {
    const input = stored(pi, pathTo('PAID'));
    const ctx = input.snapshot.context as Record<string, unknown>;
    const corrupted = { ...input, snapshot: { ...input.snapshot, context: { ...ctx, amount: '999' } } };
    const r = verifyReplay(registry, corrupted);
    expect(r.equal).toBe(false);
    expect(r.difference).toEqual({ path: 'context.amount', stored: '999', replayed: ctx.amount });
  });

  it('a stored state the journal does not reach is different at value', () => {
    const input = stored(pi, pathTo('PAID'));
    const r = verifyReplay(registry, { ...input, snapshot: { ...input.snapshot, value: 'CONFIRMING' } });
    expect(r.difference).toEqual({ path: 'value', stored: 'CONFIRMING', replayed: 'PAID' });
  });

  it('a journal missing its last entry is different', () => {
    const input = stored(pi, pathTo('PAID'));
    const r = verifyReplay(registry, { ...input, events: input.events.slice(0, -1) });
    expect(r.equal).toBe(false);
    expect(r.difference?.path).toMatch(/^(value|context\.)/);
  });

  it('an empty journal cannot be replayed: different, with the reason', () => {
    const input = stored(pi, pathTo('AWAITING_PAYMENT'));
    const r = verifyReplay(registry, { ...input, events: [] });
    expect(r).toMatchObject({ equal: false, error: 'empty journal' });
  });

  it('key order in stored JSON does not matter (jsonb reorders keys)', () => {
    expect(firstDifference({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBeNull();
    expect(firstDifference({ a: [1, 2] }, { a: [1, 3] })).toEqual({ path: 'a.1', stored: 2, replayed: 3 });
    expect(firstDifference({ a: 1 }, { a: 1, b: null })).toEqual({ path: 'b', stored: undefined, replayed: null });
  });
});

/** Random chain histories of one intent: whatever the machine accepted, the journal explains. */
const step$ = fc.oneof(
  fc.record({ k: fc.constant('seen' as const), tx: fc.constantFrom('tx1', 'tx2'), legs: fc.constantFrom('exact' as const, 'short' as const, 'over' as const) }),
  fc.record({ k: fc.constant('included' as const), tx: fc.constantFrom('tx1', 'tx2'), depth: fc.integer({ min: 0, max: 14 }) }),
  fc.record({ k: fc.constant('block' as const), head: fc.integer({ min: 100, max: 120 }) }),
  fc.record({ k: fc.constantFrom('dropped' as const, 'reorged' as const, 'timer' as const, 'cancel' as const) }),
);

/** Every leaf path of a JSON value (`context.tx.hash`, `context.refunds.0.amount`). */
function leaves(v: unknown, path = ''): string[] {
  if (v === null || typeof v !== 'object') return path ? [path] : [];
  return Object.entries(v).flatMap(([k, x]) => leaves(x, path ? `${path}.${k}` : k));
}

describe('replay-verify, property', () => {
  it('random histories replay equal; changing any one leaf of the stored context is found at that path', () => {
    fc.assert(
      fc.property(fc.array(step$, { maxLength: 25 }), fc.nat(), (steps, pick) => {
        const events: EventBase[] = [createEvent()];
        steps.forEach((x, i) => {
          const at = T0 + (i + 1) * MIN;
          if (x.k === 'seen') events.push(seen(at, x.tx, x.legs));
          else if (x.k === 'included') events.push(included(at, { tx: x.tx, height: 100, head: 100 + x.depth }));
          else if (x.k === 'block') events.push(block(at, x.head));
          else if (x.k === 'dropped') events.push(dropped(at));
          else if (x.k === 'reorged') events.push(reorged(at));
          else if (x.k === 'timer') events.push(timer(T0 + 31 * MIN + i));
          else events.push(cancel(at));
        });
        const input = stored(pi, events);
        expect(verifyReplay(registry, input).equal).toBe(true);
        const paths = leaves(input.snapshot.context, 'context');
        const target = paths[pick % paths.length]!;
        const corrupted = JSON.parse(JSON.stringify(input.snapshot)) as Record<string, unknown>;
        const keys = target.split('.');
        let at = corrupted;
        for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
        at[keys.at(-1)!] = '\u0000corrupted';
        const r = verifyReplay(registry, { ...input, snapshot: corrupted as unknown as PersistedSnapshot });
        expect(r.equal).toBe(false);
        expect(r.difference?.path).toBe(target);
      }),
      { numRuns: 150 },
    );
  });
});
