import { describe, expect, it } from 'vitest';
import { restore, step, type PersistedSnapshot } from '../kit/step.ts';
import open from '../../test/fixtures/snapshots/invoice/1/open.json' with { type: 'json' };
import paid from '../../test/fixtures/snapshots/invoice/1/paid.json' with { type: 'json' };
import { invoiceDefinition as def } from './definition.ts';

/**
 * Snapshots persisted by invoice machine version 1 (test/fixtures/snapshots/invoice/1/) must
 * restore under the current code and keep moving. These files are frozen; a change that
 * breaks them needs version 2.
 */
const T = 1_767_225_600_000 + 3_600_000;

describe('golden snapshots, invoice v1', () => {
  it('OPEN restores and is paid by its intent (invoice.paid once)', () => {
    const s = open as unknown as PersistedSnapshot;
    expect(String(restore(def, s).value)).toBe('OPEN');
    const r = step(def, s, { type: 'intent.paid', id: 'g1', at: T, intent_id: 'pay_golden', pos: 50 });
    expect(r.status).toBe('PAID');
    expect(r.effects.map((e) => e.type)).toEqual(['emitWebhook']);
  });

  it('PAID restores, refuses a void, and a reorg of its payment reopens it', () => {
    const s = paid as unknown as PersistedSnapshot;
    expect(String(restore(def, s).value)).toBe('PAID');
    expect(step(def, s, { type: 'invoice.void', id: 'g2', at: T }).accepted).toBe(false);
    expect(step(def, s, { type: 'intent.reorged', id: 'g3', at: T, intent_id: 'pay_golden', pos: 60 }).status).toBe('OPEN');
  });
});
