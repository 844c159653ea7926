import { describe, expect, it } from 'vitest';
import { mergeRows } from './invoice-feed-controller.ts';

const inv = (id: string, status: string, version: number) => ({ id, status, version });

describe('mergeRows: the invoices page shows the newer of the list and the stream', () => {
  it('a streamed version newer than the list replaces its row; an older one (a list read that raced it) does not', () => {
    const listed = [inv('inv_2', 'OPEN', 2), inv('inv_1', 'PAID', 5)];
    const streamed = new Map([
      ['inv_2', inv('inv_2', 'PAID', 3)],
      ['inv_1', inv('inv_1', 'OPEN', 4)],
    ]);
    expect(mergeRows(listed, streamed, () => true)).toEqual([inv('inv_2', 'PAID', 3), inv('inv_1', 'PAID', 5)]);
  });

  it('invoices the list does not have yet come first, newest first, when the filter keeps them', () => {
    const streamed = new Map([
      ['inv_3', inv('inv_3', 'DRAFT', 1)],
      ['inv_4', inv('inv_4', 'OPEN', 2)],
    ]);
    expect(mergeRows([inv('inv_1', 'OPEN', 2)], streamed, () => true).map((r) => r.id)).toEqual(['inv_4', 'inv_3', 'inv_1']);
    expect(mergeRows([], streamed, (r) => r.status === 'OPEN').map((r) => r.id)).toEqual(['inv_4']);
  });
});
