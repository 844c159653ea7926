-- Chain indexer state (DESIGN.md §3, ADR 0010): cursor, recent block hashes, reference index,
-- transactions inside the settlement window, and the per-network lease.

-- `depth_head`: the head the indexer last published depth signals for, one number per network
-- instead of a mark on every watched transaction (see chain_watch_settles).
CREATE TABLE chain_cursor (
  network    text PRIMARY KEY,
  height     integer NOT NULL,
  hash       text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  depth_head integer
);

-- The last 128 canonical blocks as the indexer saw them: reorg detection walks back here.
CREATE TABLE chain_blocks (
  network     text NOT NULL,
  height      integer NOT NULL,
  hash        text NOT NULL,
  parent_hash text NOT NULL,
  PRIMARY KEY (network, height)
);

-- Reference index: payment and refund references to the actor that owns them, written by the
-- statement that creates the actor (a create companion, runtime/chain/chain-refs.ts), so no
-- handler writes it. Actor-scoped: the key carries `actor_id`, so the row can live on its
-- actor's shard and the create stays a one-shard transaction; it leads with the reference,
-- which is how the indexer looks rows up.
CREATE TABLE chain_refs (
  reference  text NOT NULL,
  network    text NOT NULL,
  actor_id   text NOT NULL,
  kind       text NOT NULL,
  recipient  text NOT NULL,
  treasury   text,
  required   integer NOT NULL DEFAULT 12,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (reference, actor_id)
);

-- Matched transactions and where they sit; depth signals go only to rows inside the window.
CREATE TABLE chain_watch (
  network      text NOT NULL,
  tx_hash      text NOT NULL,
  actor_id     text NOT NULL,
  kind         text NOT NULL,
  block_height integer,
  block_hash   text,
  required     integer NOT NULL DEFAULT 12,
  -- The position at which the block holding the transaction was applied: depth signals name
  -- it, so an actor applies a depth report only to the inclusion it is about.
  inclusion_pos bigint,
  PRIMARY KEY (network, tx_hash, actor_id)
);
CREATE INDEX chain_watch_height ON chain_watch (network, block_height);
-- A row is due a depth signal while it had not reached its required depth at the cursor's
-- depth_head: block_height + required - 1 > depth_head. This expression index serves that range.
CREATE INDEX chain_watch_settles ON chain_watch (network, (block_height + required - 1)) WHERE block_height IS NOT NULL;

-- Chain signal positions (the signal-positions ADR). Every chain signal carries the
-- indexer's position: a number reserved here before the fact it states is observed, growing
-- with every block applied or reverted and every mempool or depth report, never issued twice,
-- and only by the holder of the network's lease. The genesis hash tells a reorg from a
-- different chain.
CREATE TABLE chain_positions (
  network      text PRIMARY KEY,
  pos          bigint NOT NULL DEFAULT 0,
  genesis_hash text
);

CREATE TABLE chain_leases (
  network    text PRIMARY KEY,
  holder     text NOT NULL,
  expires_at timestamptz NOT NULL
);
