import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, replay, restore, type PersistedSnapshot } from '../../machines/kit/step.ts';
import { stepChecked } from './step-checked.ts';
import { invoiceDefinition } from '../../machines/invoice/definition.ts';
import type { InvoiceContext } from '../../machines/invoice/context.ts';
import { webhookEventId } from '../../runtime/engine/webhook-id.ts';

/**
 * Model-based suite for the invoice machine (DESIGN §7 "Invoices"): random commands
 * (finalize, void, mark uncollectible, attach intent) and notices from its intents (paid,
 * reorged; duplicates, foreign intents, positions out of order). Checked against a small
 * reference model at every step: VOID and UNCOLLECTIBLE are terminal; PAID leaves only by the
 * reorg of the intent that paid it; `invoice.paid` is emitted exactly on entering PAID and
 * names one fact per paying intent; snapshots survive JSON; replaying the journal gives the
 * step-by-step snapshot.
 */
const T = 1_800_000_000_000;
const INTENTS = ['pay_a', 'pay_b', 'pay_c'];
const TERMINAL = new Set(['VOID', 'UNCOLLECTIBLE']);

type Ev = Record<string, unknown> & { type: string; id: string; at: number };
const intentArb = fc.constantFrom(...INTENTS, 'pay_foreign');
const posArb = fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined });
const evArb = (n: number): fc.Arbitrary<Ev> => {
  const base = { id: `e${n}`, at: T + n * 1000 };
  return fc.oneof(
    fc.constant({ type: 'invoice.finalize', ...base, number: 'INV-0001' }),
    fc.constant({ type: 'invoice.void', ...base }),
    fc.constant({ type: 'invoice.mark_uncollectible', ...base }),
    fc.tuple(fc.constantFrom(...INTENTS), fc.integer({ min: 0, max: 3 })).map(([intent_id, attempt]) => ({ type: 'invoice.attach_intent', ...base, intent_id, attempt })),
    fc.tuple(intentArb, posArb).map(([intent_id, pos]) => ({ type: 'intent.paid', ...base, intent_id, ...(pos === undefined ? {} : { pos }) })),
    fc.tuple(intentArb, posArb).map(([intent_id, pos]) => ({ type: 'intent.reorged', ...base, intent_id, ...(pos === undefined ? {} : { pos }) })),
  );
};
const sequence = fc.integer({ min: 1, max: 25 }).chain((len) => fc.tuple(...Array.from({ length: len }, (_, i) => evArb(i))));

const createEv = {
  type: 'invoice.create',
  id: 'c',
  at: T,
  invoice_id: 'inv_aaaa',
  merchant_id: 'mer_1',
  mode: 'test',
  token: 'a'.repeat(32),
  line_items: [{ description: '<b>Design</b>', quantity: 3, unit_price: '1.5' }],
  currency: 'ANM',
};

/** The reference model: what the invoice should be after each event. */
interface Model {
  status: string;
  intents: string[];
  paidBy: string | null;
  pos: Map<string, number>;
}
function expected(m: Model, e: Ev): Model {
  const next = { ...m, intents: [...m.intents], pos: new Map(m.pos) };
  const notice = e.type === 'intent.paid' || e.type === 'intent.reorged';
  const id = e.intent_id as string;
  if (notice && typeof e.pos === 'number' && (m.pos.get(id) ?? -1) > e.pos) return m;
  const known = notice && m.intents.includes(id);
  if (notice && known && typeof e.pos === 'number') next.pos.set(id, e.pos);
  if (e.type === 'invoice.finalize' && m.status === 'DRAFT') next.status = 'OPEN';
  else if (e.type === 'invoice.void' && (m.status === 'DRAFT' || m.status === 'OPEN')) next.status = 'VOID';
  else if (e.type === 'invoice.mark_uncollectible' && m.status === 'OPEN') next.status = 'UNCOLLECTIBLE';
  else if (e.type === 'invoice.attach_intent' && m.status === 'OPEN' && e.attempt === m.intents.length && !m.intents.includes(id)) next.intents.push(id);
  else if (e.type === 'intent.paid' && m.status === 'OPEN' && known) Object.assign(next, { status: 'PAID', paidBy: id });
  else if (e.type === 'intent.reorged' && m.status === 'PAID' && id === m.paidBy) Object.assign(next, { status: 'OPEN', paidBy: null });
  return next;
}

/** Reaches PAID, is reorged back to OPEN, paid again by the same intent (same fact), drops a stale notice, and refuses a void. */
const EXAMPLE: Ev[] = [
  { type: 'invoice.finalize', id: 'e0', at: T, number: 'INV-0001' },
  { type: 'invoice.attach_intent', id: 'e1', at: T, intent_id: 'pay_a', attempt: 0 },
  { type: 'intent.paid', id: 'e2', at: T, intent_id: 'pay_a', pos: 5 },
  { type: 'intent.paid', id: 'e3', at: T, intent_id: 'pay_a', pos: 6 },
  { type: 'intent.reorged', id: 'e4', at: T, intent_id: 'pay_a', pos: 7 },
  { type: 'intent.paid', id: 'e5', at: T, intent_id: 'pay_a', pos: 3 },
  { type: 'intent.paid', id: 'e6', at: T, intent_id: 'pay_a', pos: 9 },
  { type: 'invoice.void', id: 'e7', at: T },
];
/** Voided with an intent attached; that intent's late settlement leaves it VOID (recorded for a refund). */
const EXAMPLE_VOID: Ev[] = [
  { type: 'invoice.finalize', id: 'e0', at: T, number: 'INV-0002' },
  { type: 'invoice.attach_intent', id: 'e1', at: T, intent_id: 'pay_b', attempt: 0 },
  { type: 'invoice.void', id: 'e2', at: T },
  { type: 'intent.paid', id: 'e3', at: T, intent_id: 'pay_b' },
];

/** A reorg notice that moves nothing (OPEN) is still recorded: an older settlement notice arriving after it is stale. */
const EXAMPLE_STALE: Ev[] = [
  { type: 'invoice.finalize', id: 'e0', at: T, number: 'INV-0003' },
  { type: 'invoice.attach_intent', id: 'e1', at: T, intent_id: 'pay_c', attempt: 0 },
  { type: 'intent.reorged', id: 'e2', at: T, intent_id: 'pay_c', pos: 9 },
  { type: 'intent.paid', id: 'e3', at: T, intent_id: 'pay_c', pos: 5 },
];

function run(events: Ev[]) {
  const made = create(invoiceDefinition, invoiceDefinition.events.parse(createEv));
  let snap: PersistedSnapshot = made.snapshot;
  let status = made.status;
  let model: Model = { status: 'DRAFT', intents: [], paidBy: null, pos: new Map() };
  const accepted: unknown[] = [invoiceDefinition.events.parse(createEv)];
  const paidFacts: string[] = [];
  const statuses = new Set([status]);
  for (const raw of events) {
    const e = invoiceDefinition.events.parse(raw);
    const r = stepChecked(invoiceDefinition, snap, e);
    model = expected(model, raw);
    expect(r.status, `${status} + ${raw.type}`).toBe(model.status);
    if (TERMINAL.has(status)) expect(r.status).toBe(status);
    if (status === 'PAID' && r.status !== 'PAID') expect(raw).toMatchObject({ type: 'intent.reorged', intent_id: (snap.context as InvoiceContext).paid_by });
    const paid = r.effects.filter((f) => f.type === 'emitWebhook' && f.params.type === 'invoice.paid');
    // Emitted exactly when the invoice enters PAID, and only then.
    expect(paid.length).toBe(status !== 'PAID' && r.status === 'PAID' ? 1 : 0);
    for (const f of paid) if (f.type === 'emitWebhook') paidFacts.push(webhookEventId('mer_1', f.params.type, f.params.data));
    if (r.accepted) accepted.push(e);
    snap = JSON.parse(JSON.stringify(r.snapshot)) as PersistedSnapshot;
    expect(String(restore(invoiceDefinition, snap).value)).toBe(r.status);
    status = r.status;
    statuses.add(status);
  }
  const ctx = snap.context as InvoiceContext;
  // One fact per paying intent: a re-settlement after a reorg names the same event id.
  const payers = new Set(accepted.filter((e): e is Ev => (e as Ev).type === 'intent.paid').map((e) => e.intent_id));
  expect(new Set(paidFacts).size).toBeLessThanOrEqual(payers.size);
  expect(ctx.total).toBe('4.5');
  expect(replay(invoiceDefinition, accepted as never)).toEqual(snap);
  return { statuses, paidFacts };
}

describe('invoice machine, model-based', () => {
  it('follows the reference model over random sequences (terminal stays terminal, paid once per intent, replay equals snapshot)', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(sequence, (events) => {
        for (const s of run(events).statuses) seen.add(s);
      }),
      { numRuns: 1500, examples: [[EXAMPLE as never], [EXAMPLE_VOID as never], [EXAMPLE_STALE as never]] },
    );
    for (const s of ['DRAFT', 'OPEN', 'PAID', 'VOID']) expect(seen.has(s), s).toBe(true);
  });

  it('the example: one invoice.paid fact although PAID was entered twice, stale and duplicate notices dropped', () => {
    const { statuses, paidFacts } = run(EXAMPLE);
    expect([...statuses]).toEqual(['DRAFT', 'OPEN', 'PAID']);
    expect(paidFacts).toHaveLength(2);
    expect(new Set(paidFacts).size).toBe(1);
    const v = run(EXAMPLE_VOID);
    expect([...v.statuses]).toEqual(['DRAFT', 'OPEN', 'VOID']);
    expect(v.paidFacts).toEqual([]);
    expect([...run(EXAMPLE_STALE).statuses]).toEqual(['DRAFT', 'OPEN']);
  });
});
