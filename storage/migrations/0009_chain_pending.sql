-- Matched transactions the indexer saw pending and has not seen included or gone (ADR 0033).
-- Kept beside the cursor, not in one process's memory, so the next lease holder reports the
-- drop of a transaction another holder saw pending.
CREATE TABLE chain_pending (
  network  text NOT NULL,
  tx_hash  text NOT NULL,
  actor_id text NOT NULL,
  kind     text NOT NULL,
  PRIMARY KEY (network, tx_hash, actor_id)
);
