-- Depth signals without a write per watched transaction (ADR 0010). Each tick used to mark
-- every row of the settlement window (chain_watch.notified_head): with 1,000-transaction
-- blocks, 12,000 row updates per block. The indexer now keeps one number per network, the
-- head it last published depth for; a row is due while it had not reached its required depth
-- at that head: block_height + required - 1 > depth_head. The expression index serves that
-- range. notified_head is no longer written.
ALTER TABLE chain_cursor ADD COLUMN depth_head integer;
CREATE INDEX chain_watch_settles ON chain_watch (network, (block_height + required - 1)) WHERE block_height IS NOT NULL;
