-- Payment links and their unit holds (DESIGN §7 "Payment links"). Both are actors; these
-- tables only find them: a link by its merchant's slug or its short code, a link's holds for
-- the dashboard. Each row is written in the statement that creates its actor (a create
-- companion, runtime/commerce/link-index.ts), so it exists exactly when the actor does. Units
-- are counted in the link actor's snapshot, never here.

CREATE TABLE payment_links (
  id         text PRIMARY KEY,
  merchant   text NOT NULL REFERENCES merchants (id),
  mode       text NOT NULL CHECK (mode IN ('live', 'test')),
  slug       text NOT NULL CHECK (slug ~ '^[a-z0-9-]{1,64}$'),
  code       text NOT NULL CHECK (code ~ '^[a-z2-7]{8}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- /p/{handle}/{slug} names no mode: a slug is unique per merchant across both modes.
CREATE UNIQUE INDEX payment_links_slug ON payment_links (merchant, slug);
CREATE UNIQUE INDEX payment_links_code ON payment_links (code);
CREATE INDEX payment_links_list ON payment_links (merchant, mode, created_at DESC, id DESC);

CREATE TABLE payment_link_holds (
  link_id    text NOT NULL,
  hold_id    text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (link_id, hold_id)
);
CREATE INDEX payment_link_holds_recent ON payment_link_holds (link_id, created_at DESC);
