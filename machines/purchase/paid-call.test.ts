/**
 * Paid-call success (DESIGN §5 "Scanner", ADR 0088) from the purchase machine to the listing's
 * score: routed executions end in the purchase machine, which tells the listing the ones that
 * count. A 402 (the seller refused the buyer's payment) or another 4xx costs the buyer nothing
 * and moves the share neither way; a 5xx or no answer (timeout, unreachable) counts as failed.
 */
import { describe, expect, it } from 'vitest';
import { create, step, type PersistedSnapshot } from '../kit/step.ts';
import type { EffectAction } from '../kit/effects.ts';
import type { ListingContext } from '../listing/context.ts';
import { listingDefinition } from '../listing/definition.ts';
import { listingRecord, type ListingStatus } from '../listing/view.ts';
import { priceSplit } from '../money/market.ts';
import { purchaseDefinition } from './definition.ts';

const T = 1_800_000_000_000;
const split = priceSplit('USDC', 10_000n);
const payee = (pay_to: string, amount: bigint) => ({ pay_to, amount: amount.toString() });
const parsePurchase = (e: unknown) => purchaseDefinition.events.parse(e);
const parseListing = (e: unknown) => listingDefinition.events.parse(e);

/** What one routed execution's end tells the listing `res_ab12`: its `listing.executed` events. */
function executionEnd(i: number, end: { seller_status: number } | { reason: string }): Array<Record<string, unknown>> {
  const quote = parsePurchase({
    type: 'purchase.quote', id: `q${i}`, at: T, intent_id: `pi_${i}`, resource_id: 'res_ab12', asset: 'USDC', network: 'eip155:8453', scheme: 'exact-split',
    seller: payee('0xs', split.seller), fee: payee('0xf', split.fee), total: split.total.toString(), fee_bps: 50, expires_at: T + 300_000,
  });
  const fee = { ...payee('0xf', split.fee), payer: '0xb', nonce: `n${i}`, valid_before: T + 600_000, payload: {} };
  let snap: PersistedSnapshot = create(purchaseDefinition, quote).snapshot;
  snap = step(purchaseDefinition, snap, parsePurchase({ type: 'purchase.execute', id: `x${i}`, at: T + 1_000, fee, deadline_at: T + 46_000 })).snapshot;
  const type = 'seller_status' in end ? 'execute.answered' : 'execute.failed';
  const r = step(purchaseDefinition, snap, parsePurchase({ type, id: `a${i}`, at: T + 2_000, ...end }));
  expect(r.accepted).toBe(true);
  return r.effects.flatMap((f: EffectAction) => (f.type === 'sendTo' && f.params.event.type === 'listing.executed' ? [f.params.event] : []));
}

/** A listing with five conformant probes (score 100) that then hears the given execution ends. */
function paidCallSuccess(ends: Array<{ seller_status: number } | { reason: string }>): { part: number | undefined; counted: number } {
  let snap = create(listingDefinition, parseListing({
    type: 'listing.register', id: 'r1', at: T, resource_id: 'res_ab12', provider_id: 'prov_cd34', name: 'Weather', description: '', category: 'data', tags: [],
    endpoint: 'https://seller.example/weather', method: 'GET', model: 'per_call', assets: [{ asset: 'USDC', pay_to: '0xs', seller_price_atomic: '10000' }],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  })).snapshot;
  for (let i = 1; i <= 5; i++) {
    const probe = { type: 'listing.probed', id: `p${i}`, at: T + i * 600_000, outcome: 'ok', http_status: 402, latency_ms: 50, detail: '', next_probe_in_ms: 600_000 };
    snap = step(listingDefinition, snap, parseListing(probe)).snapshot;
  }
  for (const [i, end] of ends.entries()) for (const e of executionEnd(i, end)) snap = step(listingDefinition, snap, parseListing(e)).snapshot;
  const ctx = snap.context as ListingContext;
  return { part: listingRecord(ctx, snap.value as ListingStatus).score_breakdown?.paid_call_success, counted: ctx.scan?.paid.length ?? 0 };
}

describe('paid-call success from routed executions (ADR 0088)', () => {
  it('402 answers, however many, move it neither way: the buyer-refused payment is not the seller failing', () => {
    expect(paidCallSuccess([{ seller_status: 402 }, { seller_status: 402 }, { seller_status: 402 }])).toEqual({ part: 10, counted: 0 });
    expect(paidCallSuccess([{ seller_status: 200 }, { seller_status: 402 }, { seller_status: 402 }, { seller_status: 402 }])).toEqual({ part: 10, counted: 1 });
  });

  it('nor does any other 4xx (the buyer\'s request declined, no fee taken)', () => {
    expect(paidCallSuccess([{ seller_status: 200 }, { seller_status: 400 }, { seller_status: 404 }, { seller_status: 429 }, { seller_status: 499 }])).toEqual({ part: 10, counted: 1 });
  });

  it('a 5xx, a timeout or an unreachable seller counts as failed; an answer below 400 as served', () => {
    expect(paidCallSuccess([{ seller_status: 500 }])).toEqual({ part: 0, counted: 1 });
    expect(paidCallSuccess([{ seller_status: 200 }, { seller_status: 503 }])).toEqual({ part: 5, counted: 2 });
    expect(paidCallSuccess([{ seller_status: 302 }, { reason: 'timeout' }])).toEqual({ part: 5, counted: 2 });
    expect(paidCallSuccess([{ seller_status: 399 }, { seller_status: 201 }, { reason: 'connect ECONNREFUSED' }, { seller_status: 402 }])).toEqual({ part: 6.7, counted: 3 });
  });
});
