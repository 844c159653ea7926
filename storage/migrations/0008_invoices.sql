-- Invoices (DESIGN §7 "Invoices"). The invoice itself is an actor (`actors`, kind 'invoice');
-- these tables only index it.

-- `/i/{token}` → invoice. Written in the statement that creates the invoice actor (a
-- CreateCompanion, runtime/commerce/invoice-rows.ts), so it exists exactly when the invoice
-- does. Actor-scoped: `actor_id` is in the key, as for every table keyed by an actor; the
-- key's leading `token` serves the page's look-up, and 160 random bits need no uniqueness check.
CREATE TABLE invoice_tokens (
  token    text NOT NULL,
  actor_id text NOT NULL,
  merchant text NOT NULL,
  mode     text NOT NULL CHECK (mode IN ('live', 'test')),
  PRIMARY KEY (token, actor_id)
);

-- Per merchant and mode, the last invoice number given out. Taken with one
-- INSERT … ON CONFLICT DO UPDATE … RETURNING: the row lock serialises concurrent finalizes,
-- so no two invoices of a merchant share a number.
CREATE TABLE invoice_numbers (
  merchant text NOT NULL,
  mode     text NOT NULL CHECK (mode IN ('live', 'test')),
  last     bigint NOT NULL,
  PRIMARY KEY (merchant, mode)
);
