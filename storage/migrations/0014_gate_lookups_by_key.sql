-- The gate's batched key lookups and claims (runtime/merchant/gate-sql.ts) as functions. As
-- plain joins of the offered hashes with api_keys, the plan cached on a connection's first call,
-- made while api_keys was small and never analyzed (autovacuum is off on these machines),
-- read every key on every call once there were many: 20,000 keys, 4.4 ms per call. Here each
-- offered key is a LATERAL subquery with LIMIT 1 (the planner keeps it per key), so every
-- lookup is on a unique index (key hash, merchant id, payout address, actor id) whatever the
-- planner knows of the tables. The functions force the cached generic plan: seeing the array
-- lengths, the planner would price every custom plan below the generic one and plan the
-- statement afresh on every call (as in migration 0008), doubling its cost.

-- An active secret key by its hash, with its merchant and payout address. A simple SQL
-- function: the planner inlines it as a subquery (LIMIT 1 keeps it one per offered key).
CREATE FUNCTION anm_secret_key(p_hash text)
RETURNS TABLE (key_id text, merchant text, mode text, merchant_status text, success_url text, cancel_url text, payout_address text)
LANGUAGE sql STABLE AS $$
  SELECT k.id, k.merchant, k.mode, m.status, m.success_url, m.cancel_url, pa.address
    FROM api_keys k
    JOIN merchants m ON m.id = k.merchant
    LEFT JOIN payout_addresses pa ON pa.merchant = k.merchant AND pa.mode = k.mode
   WHERE k.hash = p_hash AND k.kind = 'secret' AND k.revoked_at IS NULL
   LIMIT 1
$$;

CREATE FUNCTION anm_gate_lookup_many(p_hashes text[], p_ids text[])
RETURNS TABLE (i integer, key_id text, merchant text, mode text, merchant_status text, success_url text, cancel_url text, payout_address text, read_state text, read_snapshot jsonb)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT x.i::integer, k.key_id, k.merchant, k.mode, k.merchant_status, k.success_url, k.cancel_url, k.payout_address, a.state, a.snapshot
    FROM unnest(p_hashes, p_ids) WITH ORDINALITY AS x(hash, id, i)
   CROSS JOIN LATERAL anm_secret_key(x.hash) k
    -- Only the id is matched inside: the primary key is then the one index that fits.
    LEFT JOIN LATERAL (SELECT a.kind, a.merchant, a.mode, a.state, a.snapshot FROM actors a WHERE a.id = x.id LIMIT 1) a
      ON a.kind = 'payment_intent' AND a.merchant = k.merchant AND a.mode = k.mode AND k.merchant_status = 'active';
END $$;

CREATE FUNCTION anm_gate_claim_many(p_hashes text[], p_idem text[], p_request_hash text[], p_new_id text[])
RETURNS TABLE (i integer, key_id text, merchant text, mode text, merchant_status text, success_url text, cancel_url text, payout_address text, claimed boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  -- Asynchronous commit: a lost claim only lets a retry run again.
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  WITH k AS (
    SELECT x.i, x.idem, x.request_hash, x.new_id, k.key_id, k.merchant, k.mode, k.merchant_status, k.success_url, k.cancel_url, k.payout_address,
           row_number() OVER (PARTITION BY k.merchant, k.mode, x.idem ORDER BY x.i) AS rn
      FROM unnest(p_hashes, p_idem, p_request_hash, p_new_id) WITH ORDINALITY AS x(hash, idem, request_hash, new_id, i)
     CROSS JOIN LATERAL anm_secret_key(x.hash) k),
  c AS (
    INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state, intent_id)
    SELECT k.merchant, k.mode, k.idem, k.request_hash, 'in_flight', k.new_id FROM k WHERE k.merchant_status = 'active' AND k.rn = 1
    ON CONFLICT DO NOTHING RETURNING merchant, mode, key)
  SELECT k.i::integer, k.key_id, k.merchant, k.mode, k.merchant_status, k.success_url, k.cancel_url, k.payout_address, c.key IS NOT NULL
    FROM k LEFT JOIN c ON k.rn = 1 AND c.merchant = k.merchant AND c.mode = k.mode AND c.key = k.idem;
END $$;
