-- The marketplace's watch (runtime/market/index.ts) reads the purchases still open, VERIFIED
-- and EXECUTING, every second. Without an index of its own that read scanned every actor;
-- this one holds the open purchases alone, so the read costs what is open, not what exists.
-- Its predicate names the kind and states as literals: the watch's queries do the same, so
-- the planner can match them.
CREATE INDEX actors_open_purchases ON actors (state, id) WHERE kind = 'purchase' AND state IN ('VERIFIED', 'EXECUTING');
