/**
 * The execute response's `purchase_status` rule (`statusAfterAnswer`, ADR 0059) held against
 * the machine's own step: at an EXECUTING snapshot, the status each seller answer would lead to.
 */
import { statusAfter, type PersistedSnapshot } from '../../machines/kit/step.ts';
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import { purchaseDefinition } from '../../machines/purchase/definition.ts';
import { statusAfterAnswer } from '../../machines/purchase/rules.ts';

const STATUSES = [200, 201, 302, 399, 400, 402, 500];

/** Throws where the rule and the step differ; adds each status the rule gave to `seen`. */
export function answerRuleAgrees(snap: PersistedSnapshot, at: number, seen: Set<string>): void {
  for (const st of STATUSES) {
    const rule = statusAfterAnswer(snap.context as PurchaseContext, st);
    const step = statusAfter(purchaseDefinition, snap, { type: 'execute.answered', id: 'probe', at, seller_status: st });
    if (rule !== step) throw new Error(`answer ${st}: the rule says ${rule}, the machine ${step}`);
    seen.add(rule);
  }
}
