-- The batched record of first responses (ADR 0005) updates through a join with unnest() of
-- its array arguments. For such a statement the planner sees the array lengths of each call,
-- estimates every custom plan cheaper than the generic one and so plans it again on every call:
-- about 45% of the statement's server CPU (measured on PostgreSQL 15, one-row batches:
-- 0.30-0.37 ms → 0.17-0.18 ms). The plan is the same whatever the lengths (index lookups on the
-- primary key), so the cached generic plan is always used.
ALTER FUNCTION anm_idempotency_done_many(text[], text[], text[], integer[], text[], text[]) SET plan_cache_mode = force_generic_plan;
