import { assign, setup } from 'xstate';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { DurableMachine } from './durable.ts';
import { create, step, type PersistedSnapshot } from './step.ts';

type Ev = { type: 'make' | 'add'; id: string; at: number; n?: number; extra?: unknown };

function counter(): { def: DurableMachine; resolved: () => number } {
  const machine = setup({ types: { context: {} as { n: number; extra?: unknown }, events: {} as Ev } }).createMachine({
    context: { n: 0 },
    initial: 'open',
    states: {
      open: {
        on: {
          make: { actions: assign(({ event }) => ({ n: event.n ?? 0 })) },
          add: [{ guard: ({ context }) => context.n >= 3, target: 'done' }, { actions: assign(({ context, event }) => ({ n: context.n + 1, extra: event.extra })) }],
        },
      },
      done: { type: 'final' },
    },
  });
  let n = 0;
  const resolveState = machine.resolveState.bind(machine);
  machine.resolveState = (config: Parameters<typeof resolveState>[0]) => {
    n++;
    return resolveState(config);
  };
  const def: DurableMachine = { kind: 'counter', version: 1, machine, events: z.any(), createEvent: 'make', input: () => undefined, status: (s) => String(s.value) };
  return { def, resolved: () => n };
}

const ev = (type: Ev['type'], extra?: unknown): Ev => ({ type, id: type, at: 1, ...(extra !== undefined && { extra }) });

describe('a step on the snapshot a step gave', () => {
  it('starts from the machine snapshot it was made from, and a reloaded one is resolved again', () => {
    const { def, resolved } = counter();
    const made = create(def, ev('make'));
    const one = step(def, made.snapshot, ev('add'));
    expect(resolved()).toBe(0);
    const reloaded = JSON.parse(made.json) as PersistedSnapshot;
    expect(step(def, reloaded, ev('add'))).toEqual(one);
    expect(resolved()).toBe(1);
  });

  it('parses the text back when the context is not plain JSON, so the snapshot is what a reload gives', () => {
    const { def, resolved } = counter();
    const made = create(def, ev('make'));
    const r = step(def, made.snapshot, ev('add', { at: new Date(0), gone: undefined }));
    expect(r.snapshot).toStrictEqual(JSON.parse(r.accepted ? r.json : ''));
    expect((r.snapshot.context as { extra: unknown }).extra).toStrictEqual({ at: '1970-01-01T00:00:00.000Z' });
    step(def, r.snapshot, ev('add'));
    expect(resolved()).toBe(1);
  });

  it('resolves a snapshot changed since it was made, and a final one', () => {
    const { def, resolved } = counter();
    const made = create(def, ev('make'));
    made.snapshot.context = { n: 3 };
    const r = step(def, made.snapshot, ev('add'));
    expect(resolved()).toBe(1);
    expect(r.status).toBe('done');
    expect(step(def, r.snapshot, ev('add')).accepted).toBe(false);
    expect(resolved()).toBe(2);
  });
});
