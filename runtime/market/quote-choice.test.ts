/** Which listing a quote names among ranked hits (quote-choice.ts; DESIGN §5 "Quote"). */
import { describe, expect, it } from 'vitest';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { quoteChoice } from './quote-choice.ts';
import type { SearchHit } from './search-index.ts';

const hit = (id: string, latency: number | null, outcome = 'ok', status = 'verified'): SearchHit => ({
  record: { resource_id: id, status, latency_p50_ms: latency, recent_scans: [{ outcome }] } as ListingRecord,
  score: 1,
});

describe('quoteChoice', () => {
  it('names the most relevant listing with latency data under the ceiling, else the most relevant without', () => {
    const hits = [hit('a', null), hit('b', 900), hit('c', 200), hit('d', null)];
    expect(quoteChoice(hits, undefined)?.record.resource_id).toBe('b');
    expect(quoteChoice(hits, 500)?.record.resource_id).toBe('c');
    expect(quoteChoice(hits, 100)?.record.resource_id).toBe('a');
    expect(quoteChoice([hit('x', 300)], 100)).toBeUndefined();
    expect(quoteChoice([], undefined)).toBeUndefined();
  });

  it('gives the same answer again from what it kept for the same hits, for each ceiling', () => {
    const hits = [hit('a', null), hit('b', 900)];
    for (let i = 0; i < 3; i++) {
      expect(quoteChoice(hits, 1000)?.record.resource_id).toBe('b');
      expect(quoteChoice(hits, 10)?.record.resource_id).toBe('a');
      expect(quoteChoice([hit('x', 300)], 100)).toBeUndefined();
    }
    for (let c = 0; c < 40; c++) expect(quoteChoice(hits, c)?.record.resource_id).toBe('a');
  });

  // DESIGN §5 "Quote": max_latency_ms is a ceiling on the p50 from scans; listings without
  // data rank last. So a measured p50 over the ceiling is out, and no data passes any ceiling.
  it.each<[string, Array<[string, number | null]>, number | undefined, string | undefined]>([
    ['no data ranks after data, however relevant', [['none', null], ['fast', 100]], 150, 'fast'],
    ['a p50 equal to the ceiling passes', [['none', null], ['fast', 100]], 100, 'fast'],
    ['one ms over the ceiling is out; no data passes', [['none', null], ['slow', 101]], 100, 'none'],
    ['over the ceiling and nothing else: no quote', [['slow', 101]], 100, undefined],
    ['no data passes even a 1 ms ceiling', [['none', null]], 1, 'none'],
    ['the most relevant under the ceiling among the measured', [['none', null], ['slow', 5], ['ok', 3], ['ok2', 2]], 4, 'ok'],
    ['no ceiling: any measured listing before no data', [['none', null], ['slowest', 99_999]], undefined, 'slowest'],
  ])('%s', (_why, listed, ceiling, want) => {
    expect(quoteChoice(listed.map(([id, p50]) => hit(id, p50)), ceiling)?.record.resource_id).toBe(want);
  });

  it("never names a listing whose endpoint's 402 last named another payTo (ADR 0071)", () => {
    const hits = [hit('squatted', 100, 'pay_to_mismatch'), hit('owner', null)];
    expect(quoteChoice(hits, undefined)?.record.resource_id).toBe('owner');
    expect(quoteChoice([hit('squatted', 100, 'pay_to_mismatch')], undefined)).toBeUndefined();
  });

  // DESIGN §5 "Quote" picks the best listing: one the marketplace will call. An offline listing
  // (latency null after its unanswered probes) must not pass as "no data".
  it('never names an offline listing, nor one whose newest probe the SSRF rules refused; unverified ones stay, after measured ones', () => {
    expect(quoteChoice([hit('gone', null, 'timeout', 'offline'), hit('up', 900)], 100)).toBeUndefined();
    expect(quoteChoice([hit('gone', null, 'timeout', 'offline'), hit('new', null, 'ok', 'unverified')], 100)?.record.resource_id).toBe('new');
    expect(quoteChoice([hit('private', null, 'refused', 'degraded'), hit('new', null, 'ok', 'unverified')], undefined)?.record.resource_id).toBe('new');
    expect(quoteChoice([hit('new', null, 'ok', 'unverified'), hit('measured', 50)], undefined)?.record.resource_id).toBe('measured');
  });
});
