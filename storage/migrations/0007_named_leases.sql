-- Leases by name (ADR 0004): a holder may keep several chunks of one bucket, each a row of its
-- own released by name with its unused tokens, instead of one row per holder settled by amount.
-- Replaces the lease table and the three functions of migration 0005 whose signatures change;
-- the table is unlogged and holds only live leases, so dropping it loses at most those.
DROP FUNCTION anm_gate_lease(text, integer, text, double precision, double precision, double precision, double precision, double precision,
                             text, double precision, double precision, boolean, double precision, double precision, double precision,
                             text, text, text, integer, text);
DROP FUNCTION anm_lease_settle(text, integer, text[], double precision[], double precision[], double precision[], double precision[]);
DROP FUNCTION anm_lease(text, text, double precision, double precision, double precision, double precision, double precision, integer, timestamptz);
DROP TABLE rate_leases;

CREATE UNLOGGED TABLE rate_leases (
  bucket     text NOT NULL,
  lease      text NOT NULL,
  holder     text NOT NULL,
  leased     double precision NOT NULL,
  -- The holder stops using the chunk well before this (it counts from before its request was
  -- sent); after it the lease is void, so a crashed process's share comes back by itself.
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (bucket, lease)
);

-- One lease operation of `p_holder` on `p_bucket`, under the bucket's row lock:
--   release: leases the holder is done with, each with the tokens it did not use (those come
--            back only while the lease is live: a void lease's tokens are gone);
--   want:    tokens asked for (0 to release only), as lease `p_lease`. Near exhaustion at most
--            half of what is left is granted, so other holders still find tokens.
-- Returns what was granted, the bucket's tokens after, and what other holders' live leases hold.
-- `p_at` is for tests (a simulated clock); NULL is the database clock.
CREATE FUNCTION anm_lease(p_bucket text, p_holder text, p_capacity double precision, p_per_sec double precision,
                          p_want double precision, p_lease text, p_release text[], p_unused double precision[],
                          p_ttl_ms integer, p_at timestamptz,
                          OUT granted double precision, OUT tokens double precision, OUT others double precision)
LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz := coalesce(p_at, now());
  b_tokens double precision;
  b_at timestamptz;
  credit double precision := 0;
  held double precision;
  v double precision;
BEGIN
  SELECT b.tokens, b.updated_at INTO b_tokens, b_at FROM rate_buckets b WHERE b.bucket = p_bucket FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_buckets AS b (bucket, tokens, taken, updated_at) VALUES (p_bucket, p_capacity, false, t)
      ON CONFLICT (bucket) DO NOTHING;
    SELECT b.tokens, b.updated_at INTO b_tokens, b_at FROM rate_buckets b WHERE b.bucket = p_bucket FOR UPDATE;
  END IF;
  IF cardinality(p_release) > 0 THEN
    WITH d AS (
      DELETE FROM rate_leases l USING unnest(p_release, p_unused) AS r(lease, unused)
       WHERE l.bucket = p_bucket AND l.lease = r.lease AND l.holder = p_holder
      RETURNING l.expires_at > t AS live, least(r.unused, l.leased) AS unused)
    SELECT coalesce(sum(d.unused) FILTER (WHERE d.live), 0) INTO credit FROM d;
  END IF;
  SELECT coalesce(sum(l.leased) FILTER (WHERE l.holder <> p_holder), 0), coalesce(sum(l.leased), 0) INTO others, held
    FROM rate_leases l WHERE l.bucket = p_bucket AND l.expires_at > t;
  v := greatest(0, least(p_capacity - held, anm_refill(b_tokens, b_at, t, p_capacity, p_per_sec) + credit));
  granted := 0;
  IF p_want >= 1 AND v >= 1 THEN
    granted := least(floor(p_want), greatest(1, floor(v / 2)));
    v := v - granted;
    INSERT INTO rate_leases (bucket, lease, holder, leased, expires_at)
    VALUES (p_bucket, p_lease, p_holder, granted, t + make_interval(secs => p_ttl_ms / 1000.0));
  END IF;
  UPDATE rate_buckets b SET tokens = v, taken = granted >= 1, updated_at = greatest(b_at, t) WHERE b.bucket = p_bucket;
  -- Leases of processes that went away.
  DELETE FROM rate_leases l WHERE l.bucket = p_bucket AND l.expires_at <= t;
  tokens := v;
END $$;

-- Releases many leases of one holder at once (the idle sweep; one element per lease), bucket
-- by bucket in bucket order so that two transactions locking several buckets never wait on
-- each other in a cycle (admission locks `ip:` before `key:`, which sorts the same way).
CREATE FUNCTION anm_lease_settle(p_holder text, p_ttl_ms integer, p_buckets text[], p_capacity double precision[],
                                 p_per_sec double precision[], p_leases text[], p_unused double precision[])
RETURNS TABLE (bucket text, tokens double precision, others double precision)
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR r IN SELECT x.b, min(x.c) AS c, min(x.s) AS s, array_agg(x.l) AS ls, array_agg(x.u) AS us
             FROM unnest(p_buckets, p_capacity, p_per_sec, p_leases, p_unused) AS x(b, c, s, l, u)
            GROUP BY x.b ORDER BY x.b LOOP
    SELECT r.b, l.tokens, l.others INTO bucket, tokens, others
      FROM anm_lease(r.b, p_holder, r.c, r.s, 0, NULL, r.ls, r.us, p_ttl_ms, NULL) l;
    RETURN NEXT;
  END LOOP;
END $$;

-- Admission with leases, in one round trip: an IP lease operation when this process has no
-- IP token left (a refusal stops here: the key's quota is not touched); the secret key by its
-- keyed hash with its merchant (always: revocation and suspension take effect at once); a key
-- lease operation when this process has no key token left; then optionally an Idempotency-Key
-- claim or one intent snapshot. When both tokens come from local leases this is a read (plus
-- the claim). `p_ip_bucket` NULL: no IP operation; `p_key_op` false: no key operation.
CREATE FUNCTION anm_gate_lease(
  p_holder text, p_ttl_ms integer,
  p_ip_bucket text, p_ip_capacity double precision, p_ip_per_sec double precision,
  p_ip_want double precision, p_ip_lease text, p_ip_release text[], p_ip_unused double precision[],
  p_key_hash text, p_key_capacity double precision, p_key_per_sec double precision,
  p_key_op boolean, p_key_want double precision, p_key_lease text, p_key_release text[], p_key_unused double precision[],
  p_idem_key text, p_request_hash text, p_new_intent_id text, p_takeover_after_ms integer,
  p_read_id text
) RETURNS TABLE (
  ip_granted double precision, ip_tokens double precision, ip_others double precision,
  key_id text, merchant text, mode text, merchant_status text,
  success_url text, cancel_url text, payout_address text,
  key_granted double precision, key_tokens double precision, key_others double precision,
  claim text, idem_intent_id text, idem_status integer, idem_headers jsonb, idem_body bytea,
  read_state text, read_snapshot jsonb
) LANGUAGE plpgsql AS $$
BEGIN
  IF p_ip_bucket IS NOT NULL THEN
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT l.granted, l.tokens, l.others INTO ip_granted, ip_tokens, ip_others
      FROM anm_lease(p_ip_bucket, p_holder, p_ip_capacity, p_ip_per_sec, p_ip_want, p_ip_lease, p_ip_release, p_ip_unused, p_ttl_ms, NULL) l;
    IF ip_granted < 1 OR p_key_hash IS NULL THEN
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;
  IF p_key_hash IS NULL THEN
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT k.id, k.merchant, k.mode, m.status, m.success_url, m.cancel_url, pa.address
    INTO key_id, merchant, mode, merchant_status, success_url, cancel_url, payout_address
    FROM api_keys k
    JOIN merchants m ON m.id = k.merchant
    LEFT JOIN payout_addresses pa ON pa.merchant = k.merchant AND pa.mode = k.mode
   WHERE k.hash = p_key_hash AND k.kind = 'secret' AND k.revoked_at IS NULL;
  IF key_id IS NULL OR merchant_status <> 'active' THEN
    RETURN NEXT;
    RETURN;
  END IF;
  IF p_key_op THEN
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT l.granted, l.tokens, l.others INTO key_granted, key_tokens, key_others
      FROM anm_lease('key:' || key_id, p_holder, p_key_capacity, p_key_per_sec, p_key_want, p_key_lease, p_key_release, p_key_unused, p_ttl_ms, NULL) l;
    IF key_granted < 1 THEN
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;
  IF p_idem_key IS NOT NULL THEN
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT c.claim, c.intent_id, c.status, c.headers, c.body INTO claim, idem_intent_id, idem_status, idem_headers, idem_body
      FROM anm_idem_claim(merchant, mode, p_idem_key, p_request_hash, p_new_intent_id, p_takeover_after_ms) c;
  END IF;
  IF p_read_id IS NOT NULL THEN
    SELECT a.state, a.snapshot INTO read_state, read_snapshot
      FROM actors a
     WHERE a.id = p_read_id AND a.kind = 'payment_intent' AND a.merchant = anm_gate_lease.merchant AND a.mode = anm_gate_lease.mode;
  END IF;
  RETURN NEXT;
END $$;
