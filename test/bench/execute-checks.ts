/**
 * What bench:execute reads back from the database: when the work after the executions'
 * answers is done, and whether the fees landed on the simulated ledger once each, whichever
 * marketplace process recorded them.
 */
import type { Db } from '../../storage/db.ts';
import type { MarketServices } from '../../runtime/market/index.ts';
import { fmt } from './stats.ts';

export type Lane = 'USDC' | 'ANM';

/**
 * Waits until the work an execution does after its answer is done: on USDC the fee settled
 * (SETTLED), on ANM the answer recorded (the fee waits for the seller transfer's depth); and
 * the outbox relayed.
 */
export async function drained(db: Db, lane: Lane, ids: string[]): Promise<void> {
  const done = lane === 'USDC' ? `a.state = 'SETTLED'` : `a.snapshot->'context'->'execution'->>'seller_status' IS NOT NULL`;
  // Each poll asks only about the executions not yet seen done, and whether any outbox row
  // waits at all: a poll that counted every execution and every unpublished row took a core's
  // share of PostgreSQL while the last work was finishing, and counted against it.
  let pending = ids;
  for (;;) {
    const { rows } = await db.query<{ id: string | null; waiting: boolean }>(
      `SELECT a.id, EXISTS (SELECT 1 FROM outbox WHERE published_at IS NULL) AS waiting
         FROM (SELECT 1) AS one LEFT JOIN actors a ON a.id = ANY($1) AND ${done}`,
      [pending],
    );
    const seen = new Set(rows.map((r) => r.id).filter((id): id is string => id !== null));
    pending = pending.filter((id) => !seen.has(id));
    if (pending.length === 0 && !rows[0]!.waiting) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Settled {
  id: string;
  payer: string;
  fee: bigint;
}

/** The fee address's balance and each payer's, before a run whose fees `settledOnce` then checks. */
export async function balances(market: MarketServices, feeAddress: string, runs: readonly Settled[]): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  for (const a of new Set([feeAddress, ...runs.map((r) => r.payer)])) out.set(a, await market.ledger.balanceOf(a));
  return out;
}

/**
 * After a USDC run and its wait: every execution recorded the seller's 200 and settled, the fee
 * address gained exactly the run's fees and each payer lost exactly its own (the seller leg is
 * the seller's to settle, and this seller never does). Throws otherwise; returns the line to print.
 */
export async function settledOnce(db: Db, market: MarketServices, feeAddress: string, runs: readonly Settled[], before: Map<string, bigint>): Promise<string> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM actors WHERE id = ANY($1) AND state = 'SETTLED' AND snapshot->'context'->'execution'->>'seller_status' = '200'`,
    [runs.map((r) => r.id)],
  );
  const recorded = Number(rows[0]!.n);
  const owed = new Map<string, bigint>();
  for (const r of runs) owed.set(r.payer, (owed.get(r.payer) ?? 0n) + r.fee);
  const total = runs.reduce((a, r) => a + r.fee, 0n);
  const gained = (await market.ledger.balanceOf(feeAddress)) - before.get(feeAddress)!;
  const wrong: string[] = [];
  if (recorded !== runs.length) wrong.push(`${recorded} of ${runs.length} executions SETTLED with the seller's 200 recorded`);
  if (gained !== total) wrong.push(`the fee address gained ${gained}, the fees were ${total}`);
  for (const [payer, fee] of owed) {
    const lost = before.get(payer)! - (await market.ledger.balanceOf(payer));
    if (lost !== fee) wrong.push(`payer ${payer} lost ${lost}, its fees were ${fee}`);
  }
  if (wrong.length > 0) throw new Error(`ledger check: ${wrong.join('; ')}`);
  return `USDC ledger check: ${fmt(runs.length)} executions SETTLED with the answer recorded; the fee address gained exactly their ${fmt(runs.length)} fees and each of ${owed.size} payer(s) lost exactly its own`;
}
