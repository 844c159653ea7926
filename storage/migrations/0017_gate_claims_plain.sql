-- The batched Idempotency-Key claims are a plain statement again (runtime/merchant/gate-sql.ts,
-- CLAIM_MANY_SQL), with the requests as one jsonb document so the cached generic plan is kept
-- without forcing it. The PL/pgSQL wrapper cost about as much as its query per call.
DROP FUNCTION IF EXISTS anm_gate_claim_many(text[], text[], text[], text[]);
