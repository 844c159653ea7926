/**
 * Reads and the one counter behind invoices (DESIGN §7 "Invoices"). The invoice is an actor:
 * everything that changes it is an event; this file reads its snapshot (by id for its merchant,
 * by token for the public page) and hands out invoice numbers.
 */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db } from '../../storage/db.ts';
import type { Mode } from '../merchant/secrets.ts';

export interface InvoiceRow {
  id: string;
  state: string;
  snapshot: PersistedSnapshot;
  merchant: string;
  mode: Mode;
}

export interface PublicInvoice extends InvoiceRow {
  merchantName: string;
}

/** The invoice page's read: the snapshot is null when the caller's copy (`known`) is current. */
export interface InvoicePageRow {
  id: string;
  version: number;
  state: string;
  snapshot: PersistedSnapshot | null;
  merchantName: string;
}

/** What the public pay route needs to make an intent for the invoice's merchant. */
export interface InvoicePayee {
  status: 'active' | 'suspended';
  payoutAddress: string | null;
  successUrl: string | null;
  cancelUrl: string | null;
}

export class Invoices {
  constructor(private readonly db: Db) {}

  async own(id: string, merchant: string, mode: Mode): Promise<InvoiceRow | null> {
    const { rows } = await this.db.query<InvoiceRow>(
      `SELECT id, state, snapshot, merchant, mode FROM actors WHERE id = $1 AND kind = 'invoice' AND merchant = $2 AND mode = $3`,
      [id, merchant, mode],
    );
    return rows[0] ?? null;
  }

  /** The invoice a `/i/{token}` names, with its merchant's display name; a draft has no page. */
  async byToken(token: string): Promise<PublicInvoice | null> {
    const { rows } = await this.db.query<InvoiceRow & { name: string | null }>(
      `SELECT a.id, a.state, a.snapshot, a.merchant, a.mode, m.name
         FROM invoice_tokens t JOIN actors a ON a.id = t.actor_id LEFT JOIN merchants m ON m.id = a.merchant
        WHERE t.token = $1 AND a.kind = 'invoice' AND a.state <> 'DRAFT'`,
      [token],
    );
    const r = rows[0];
    return r ? { id: r.id, state: r.state, snapshot: r.snapshot, merchant: r.merchant, mode: r.mode, merchantName: r.name ?? '' } : null;
  }

  /** `byToken` for the page: the invoice's version always, its snapshot only when not `known`'s. */
  async pageByToken(token: string, known?: { id: string; version: number }): Promise<InvoicePageRow | null> {
    const { rows } = await this.db.query<Omit<InvoicePageRow, 'merchantName'> & { name: string | null }>(
      `SELECT a.id, a.version, a.state, CASE WHEN a.id = $2 AND a.version = $3 THEN NULL ELSE a.snapshot END AS snapshot, m.name
         FROM invoice_tokens t JOIN actors a ON a.id = t.actor_id LEFT JOIN merchants m ON m.id = a.merchant
        WHERE t.token = $1 AND a.kind = 'invoice' AND a.state <> 'DRAFT'`,
      [token, known?.id ?? null, known?.version ?? null],
    );
    const r = rows[0];
    return r ? { id: r.id, version: r.version, state: r.state, snapshot: r.snapshot, merchantName: r.name ?? '' } : null;
  }

  async payee(merchant: string, mode: Mode): Promise<InvoicePayee | null> {
    const { rows } = await this.db.query<InvoicePayee & { address: string | null; success_url: string | null; cancel_url: string | null }>(
      `SELECT m.status, p.address, m.success_url, m.cancel_url
         FROM merchants m LEFT JOIN payout_addresses p ON p.merchant = m.id AND p.mode = $2
        WHERE m.id = $1`,
      [merchant, mode],
    );
    const r = rows[0];
    return r ? { status: r.status, payoutAddress: r.address, successUrl: r.success_url, cancelUrl: r.cancel_url } : null;
  }

  /**
   * The merchant's next invoice number in this mode: one upsert whose row lock serialises
   * concurrent finalizes, so numbers never repeat (a finalize refused after this leaves a gap).
   */
  async nextNumber(merchant: string, mode: Mode): Promise<string> {
    const { rows } = await this.db.query<{ last: string }>(
      `INSERT INTO invoice_numbers (merchant, mode, last) VALUES ($1, $2, 1)
       ON CONFLICT (merchant, mode) DO UPDATE SET last = invoice_numbers.last + 1
       RETURNING last::text AS last`,
      [merchant, mode],
    );
    return `INV-${(rows[0]?.last ?? '0').padStart(4, '0')}`;
  }
}
