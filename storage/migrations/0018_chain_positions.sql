-- Chain signal positions (ADR 0014). Every chain signal carries the indexer's position: a
-- number reserved here before the fact it states is observed, growing with every block
-- applied or reverted and every mempool or depth report, never issued twice, and only by the
-- holder of the network's lease. The genesis hash tells a reorg from a different chain.
CREATE TABLE chain_positions (
  network      text PRIMARY KEY,
  pos          bigint NOT NULL DEFAULT 0,
  genesis_hash text
);

-- The position at which the block holding the transaction was applied: depth signals name it,
-- so an actor applies a depth report only to the inclusion it is about.
ALTER TABLE chain_watch ADD COLUMN inclusion_pos bigint;
