/**
 * The webhook facts an actor queued (its `fx.webhook.*` outbox rows, each written in the
 * transaction of one journalled step), checked against the states that actor went through.
 * Used by the multi-process chain tests (issue 27): the facts a merchant receives must tell
 * the chain's story.
 */
import type { Db } from '../../storage/db.ts';

export interface Fact {
  type: string;
  status: string | null;
  tx: string | null;
  /** The journal step (actor version) that queued it, and its place among that step's effects. */
  seq: number;
  i: number;
}

export interface Story {
  facts: Fact[];
  /** state_after of every journalled step, by seq. */
  states: Map<number, string>;
}

export async function storyOf(db: Pick<Db, 'query'>, actorId: string): Promise<Story> {
  const out = await db.query<{ msg_id: string; t: string; status: string | null; tx: string | null }>(
    `SELECT msg_id, payload->'event'->>'type' AS t, payload->'event'->'data'->>'status' AS status, payload->'event'->'data'->>'transaction_hash' AS tx
       FROM outbox WHERE actor_id = $1 AND subject LIKE 'fx.webhook.%' ORDER BY id`,
    [actorId],
  );
  const journal = await db.query<{ seq: number; state_after: string }>(`SELECT seq, state_after FROM actor_events WHERE actor_id = $1 ORDER BY seq`, [actorId]);
  const facts = out.rows.map((r) => {
    // msg_id = `${actorId}:${version}:${i}` (runtime/engine/effect-plan.ts).
    const [seq, i] = r.msg_id.slice(actorId.length + 1).split(':').map(Number);
    return { type: r.t, status: r.status, tx: r.tx, seq: seq!, i: i! };
  });
  return { facts, states: new Map(journal.rows.map((r) => [r.seq, r.state_after])) };
}

/**
 * Facts only for states the actor reached: the last fact a step queued carries the state that
 * step ended in. (A step may queue facts for states it passed through first: a settled intent
 * whose block left the chain sends `payment.reorged`, then the facts of the fresh match, in one
 * step, as the in-order run would in two; ADR 0016. Those may come only before the step's last.)
 */
function stepProblems(s: Story, quiet: Record<string, string[]> = {}): string[] {
  const problems: string[] = [];
  const bySeq = new Map<number, Fact[]>();
  for (const f of s.facts) bySeq.set(f.seq, [...(bySeq.get(f.seq) ?? []), f]);
  for (const [seq, facts] of bySeq) {
    const state = s.states.get(seq);
    if (state === undefined) problems.push(`facts ${facts.map((f) => f.type).join(',')} from step ${seq}, which the journal does not have`);
    else if (facts.at(-1)!.status !== state && !quiet[state]?.includes(facts.at(-1)!.status ?? '')) problems.push(`step ${seq} ended ${state} but its last fact ${facts.at(-1)!.type} says ${facts.at(-1)!.status}`);
    for (const f of facts.slice(1)) if (f.type === 'payment.reorged') problems.push(`step ${seq}: payment.reorged after another fact of the same step`);
  }
  return problems;
}

const SETTLED = new Set(['PAID', 'PARTIALLY_REFUNDED', 'REFUNDED']);
/**
 * Moves that send no fact (DESIGN §4 transitions): refunds move a settled intent on, and a
 * pre-settlement intent whose transaction left the chain returns to AWAITING_PAYMENT quietly.
 * The last fact may say the state before such a move.
 */
const SILENT_MOVES: Record<string, string[]> = {
  // A refund counted, or one un-counted because a deep reorg took its transfer back (ADR 0033).
  PAID: ['PARTIALLY_REFUNDED', 'REFUNDED'],
  PARTIALLY_REFUNDED: ['PAID', 'REFUNDED'],
  REFUNDED: ['PAID', 'PARTIALLY_REFUNDED'],
  AWAITING_PAYMENT: ['PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID', 'UNDERPAID'],
};

/**
 * A payment intent's facts against its final state and its one transaction `tx`:
 *  - every fact's status is a state the intent reached (see stepProblems);
 *  - the last fact says the final state, or the state before a move that sends none;
 *  - `payment.confirmed` and `payment.reorged` alternate, starting with a confirmation, and a
 *    settled intent's last is a confirmation: every reorg of a payment that ended settled is
 *    followed by a `payment.confirmed`, and the books (confirmed − reorged) are 1 exactly when
 *    settled;
 *  - every fact naming a transaction names `tx`.
 */
export function intentStoryProblems(s: Story, finalState: string, tx: string): string[] {
  const problems = stepProblems(s);
  const last = s.facts.at(-1);
  const lastSays = last?.status ?? '';
  if (!(lastSays === finalState || (SILENT_MOVES[finalState] ?? []).includes(lastSays))) problems.push(`ended ${finalState} but the last fact ${last?.type} says ${lastSays}`);
  const books = s.facts.filter((f) => f.type === 'payment.confirmed' || f.type === 'payment.reorged').map((f) => f.type);
  books.forEach((t, k) => {
    if (t !== (k % 2 === 0 ? 'payment.confirmed' : 'payment.reorged')) problems.push(`settlement facts do not alternate: ${books.join(',')}`);
  });
  if ((books.at(-1) === 'payment.confirmed') !== SETTLED.has(finalState)) problems.push(`ended ${finalState} after settlement facts ${books.join(',') || '(none)'}`);
  for (const f of s.facts) if (f.tx !== null && f.tx !== tx) problems.push(`${f.type} names ${f.tx}, not the payment ${tx}`);
  return [...new Set(problems)];
}

/**
 * A refund's facts against its final state: `refund.created` first; `refund.completed` and
 * `refund.reorged` (a deep reorg took a completed transfer back, ADR 0033) alternate, starting
 * with a completion, and the last is a completion exactly when the refund ended CONFIRMED,
 * naming the transfer it completed with. A step that reverses a completion may move on
 * quietly (to CONFIRMING or FAILED, which send no fact) after its `refund.reorged`.
 */
export function refundStoryProblems(s: Story, finalState: string, tx: string | null): string[] {
  const problems = stepProblems(s, { CONFIRMING: ['SUBMITTED'], FAILED: ['SUBMITTED'] });
  const types = s.facts.map((f) => f.type);
  if (types[0] !== 'refund.created') problems.push(`first fact ${types[0]}`);
  const books = s.facts.filter((f) => f.type === 'refund.completed' || f.type === 'refund.reorged');
  books.forEach((f, k) => {
    if (f.type !== (k % 2 === 0 ? 'refund.completed' : 'refund.reorged')) problems.push(`completion facts do not alternate: ${books.map((b) => b.type).join(',')}`);
  });
  const last = books.at(-1);
  if ((last?.type === 'refund.completed') !== (finalState === 'CONFIRMED')) problems.push(`${finalState} after completion facts ${books.map((b) => b.type).join(',') || '(none)'}`);
  else if (finalState === 'CONFIRMED' && last!.tx !== tx) problems.push(`refund.completed names ${last!.tx}, the chain has ${tx}`);
  return [...new Set(problems)];
}
