-- The batched record of first responses (0005, 0008) joined its arrays to idempotency_keys.
-- Its plan is cached once per connection, and a connection's first call usually comes while
-- the table is small and never analyzed (or empty): the planner then picks a hash join over a
-- sequential scan, and that plan is kept as the table grows to a day of keys. Measured on
-- PostgreSQL 15 with 20,000 rows: 2.5 ms per call, every row read; in bench:api it was the
-- most expensive statement of a create. One primary-key update per element gives a plan that
-- cannot depend on what the planner knows about the table (equality on the whole key of a
-- unique index), and batches are a few rows.
CREATE OR REPLACE FUNCTION anm_idempotency_done_many(p_merchant text[], p_mode text[], p_key text[], p_status integer[], p_headers text[], p_body text[])
RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR i IN 1 .. coalesce(array_length(p_key, 1), 0) LOOP
    UPDATE idempotency_keys
       SET state = 'done', status = p_status[i], headers = p_headers[i]::jsonb, body = convert_to(p_body[i], 'UTF8'), updated_at = now()
     WHERE merchant = p_merchant[i] AND mode = p_mode[i] AND key = p_key[i];
  END LOOP;
END $$;
