-- The purchase path (ADR 0049). A purchase binds both legs' nonces to its intent; the binding
-- is looked up by its key only (a leg's lane, authorizer and nonce: a replay, a settlement seen
-- on the lane). Nothing reads bindings by intent, so the index on it only cost every purchase
-- two more b-tree inserts.
DROP INDEX market_leg_nonces_intent;
