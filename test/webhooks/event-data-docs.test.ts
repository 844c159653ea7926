/**
 * docs/webhooks.md "Event data" lists exactly the fields the service sends in `refund.*` and
 * `invoice.paid` events (spec Events: their data is "not shown", so the docs are the contract).
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { initialInvoiceContext } from '../../machines/invoice/context.ts';
import { invoiceCreate } from '../../machines/invoice/events.ts';
import { invoicePaidData } from '../../machines/invoice/view.ts';
import { initialRefundContext } from '../../machines/refund/context.ts';
import { refundCreate } from '../../machines/refund/events.ts';
import { refundWebhookData } from '../../machines/refund/view.ts';

async function documented(heading: string): Promise<string[]> {
  const md = await readFile(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const start = md.indexOf(`### ${heading}`);
  expect(start, heading).toBeGreaterThan(0);
  const section = md.slice(start, md.indexOf('\n#', start + 4));
  return [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!).sort();
}

describe('webhook event data in docs/webhooks.md', () => {
  it('invoice.paid: the documented fields are the sent ones', async () => {
    const ctx = initialInvoiceContext(
      invoiceCreate.parse({ type: 'invoice.create', id: 'c', at: 1, invoice_id: 'inv_a', merchant_id: 'm', mode: 'test', token: 'a'.repeat(32), line_items: [{ description: 'x', quantity: 1, unit_price: '1' }], currency: 'ANM' }),
    );
    expect(await documented('`invoice.paid`')).toEqual(Object.keys(invoicePaidData(ctx, 'pay_a')).sort());
  });

  it('refund.created and refund.completed: the documented fields are the sent ones', async () => {
    const ctx = initialRefundContext(
      refundCreate.parse({ type: 'refund.create', id: 'c', at: 1, refund_id: 're_a', payment_intent: 'pay_a', merchant_id: 'm', mode: 'live', amount: '5', chain_id: 1, from: 'a', to: 'b', reference: 'rf1:abc' }),
    );
    expect(await documented('`refund.created`, `refund.completed`')).toEqual(Object.keys(refundWebhookData(ctx, 'REQUIRES_SIGNATURE')).sort());
  });
});
