-- Chain indexer state (DESIGN.md §3): cursor, recent block hashes, reference index,
-- transactions inside the settlement window, and the per-network lease.
CREATE TABLE chain_cursor (
  network    text PRIMARY KEY,
  height     integer NOT NULL,
  hash       text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The last 128 canonical blocks as the indexer saw them: reorg detection walks back here.
CREATE TABLE chain_blocks (
  network     text NOT NULL,
  height      integer NOT NULL,
  hash        text NOT NULL,
  parent_hash text NOT NULL,
  PRIMARY KEY (network, height)
);

-- Reference index: payment and refund references to the actor that owns them. Maintained by
-- a trigger in the same transaction that creates the actor, so no handler writes it.
CREATE TABLE chain_refs (
  reference  text PRIMARY KEY,
  network    text NOT NULL,
  actor_id   text NOT NULL,
  kind       text NOT NULL,
  recipient  text NOT NULL,
  treasury   text,
  required   integer NOT NULL DEFAULT 12,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION chain_refs_from_actor() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ctx jsonb := NEW.snapshot -> 'context';
BEGIN
  IF NEW.kind = 'payment_intent' AND ctx ? 'payment_reference' THEN
    INSERT INTO chain_refs (reference, network, actor_id, kind, recipient, treasury, required)
    VALUES (ctx ->> 'payment_reference', COALESCE(NEW.mode, 'test'), NEW.id, NEW.kind, ctx ->> 'payment_address', ctx ->> 'treasury_address',
            COALESCE((ctx ->> 'required_confirmations')::integer, 12))
    ON CONFLICT (reference) DO NOTHING;
  ELSIF NEW.kind = 'refund' AND ctx ? 'reference' THEN
    INSERT INTO chain_refs (reference, network, actor_id, kind, recipient, treasury)
    VALUES (ctx ->> 'reference', COALESCE(NEW.mode, 'live'), NEW.id, NEW.kind, ctx ->> 'to', NULL)
    ON CONFLICT (reference) DO NOTHING;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER actors_chain_refs AFTER INSERT ON actors FOR EACH ROW EXECUTE FUNCTION chain_refs_from_actor();

-- Matched transactions and where they sit; depth signals go only to rows inside the window.
CREATE TABLE chain_watch (
  network      text NOT NULL,
  tx_hash      text NOT NULL,
  actor_id     text NOT NULL,
  kind         text NOT NULL,
  block_height integer,
  block_hash   text,
  required     integer NOT NULL DEFAULT 12,
  notified_head integer,
  PRIMARY KEY (network, tx_hash, actor_id)
);
CREATE INDEX chain_watch_height ON chain_watch (network, block_height);

CREATE TABLE chain_leases (
  network    text PRIMARY KEY,
  holder     text NOT NULL,
  expires_at timestamptz NOT NULL
);
