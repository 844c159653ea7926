-- Token leases and one-trip admission (issue 3 "Speed", ADR 0004). Each gateway process (a
-- "holder") takes tokens from the shared bucket in chunks and hands them out locally; the
-- shared row stays the authority. A lease row records what a holder may still hand out (or has
-- handed out and not yet reported), and the bucket refills only up to what no live lease holds,
-- so tokens in the bucket plus unspent leased tokens never exceed the capacity.

CREATE UNLOGGED TABLE rate_leases (
  bucket     text NOT NULL,
  holder     text NOT NULL,
  leased     double precision NOT NULL,
  -- A holder stops using its tokens before this (it counts from before the request was sent);
  -- after it the lease is void, so a crashed process's share comes back by itself.
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (bucket, holder)
);

-- One lease operation of `p_holder` on `p_bucket`, under the bucket's row lock:
--   settle: forget that much of the holder's lease (spent or returned tokens);
--   unused: tokens the holder gives back (credited only while its lease is live);
--   want:   tokens asked for (0 to settle only). Near exhaustion at most half of what is left is
--           granted, so other holders still find tokens.
-- Returns what was granted, the bucket's tokens after, and what other live leases hold.
-- `p_at` is for tests (a simulated clock); NULL is the database clock.
CREATE FUNCTION anm_lease(p_bucket text, p_holder text, p_capacity double precision, p_per_sec double precision,
                          p_want double precision, p_settle double precision, p_unused double precision,
                          p_ttl_ms integer, p_at timestamptz,
                          OUT granted double precision, OUT tokens double precision, OUT others double precision)
LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz := coalesce(p_at, now());
  b_tokens double precision;
  b_at timestamptz;
  mine double precision;
  v double precision;
BEGIN
  SELECT b.tokens, b.updated_at INTO b_tokens, b_at FROM rate_buckets b WHERE b.bucket = p_bucket FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_buckets AS b (bucket, tokens, taken, updated_at) VALUES (p_bucket, p_capacity, false, t)
      ON CONFLICT (bucket) DO NOTHING;
    SELECT b.tokens, b.updated_at INTO b_tokens, b_at FROM rate_buckets b WHERE b.bucket = p_bucket FOR UPDATE;
  END IF;
  SELECT l.leased INTO mine FROM rate_leases l WHERE l.bucket = p_bucket AND l.holder = p_holder AND l.expires_at > t;
  IF mine IS NULL THEN
    -- No live lease: whatever the holder had is void, nothing comes back.
    mine := 0;
    p_unused := 0;
  END IF;
  mine := greatest(0, mine - p_settle);
  SELECT coalesce(sum(l.leased), 0) INTO others FROM rate_leases l WHERE l.bucket = p_bucket AND l.holder <> p_holder AND l.expires_at > t;
  v := greatest(0, least(p_capacity - others - mine, anm_refill(b_tokens, b_at, t, p_capacity, p_per_sec) + p_unused));
  granted := 0;
  IF p_want >= 1 AND v >= 1 THEN
    granted := least(floor(p_want), greatest(1, floor(v / 2)));
    v := v - granted;
    mine := mine + granted;
  END IF;
  UPDATE rate_buckets b SET tokens = v, taken = granted >= 1, updated_at = greatest(b_at, t) WHERE b.bucket = p_bucket;
  IF mine > 0 THEN
    INSERT INTO rate_leases AS l (bucket, holder, leased, expires_at)
    VALUES (p_bucket, p_holder, mine, t + make_interval(secs => p_ttl_ms / 1000.0))
    ON CONFLICT (bucket, holder) DO UPDATE SET leased = EXCLUDED.leased, expires_at = EXCLUDED.expires_at;
  ELSE
    DELETE FROM rate_leases l WHERE l.bucket = p_bucket AND l.holder = p_holder;
  END IF;
  -- Leases of processes that went away.
  DELETE FROM rate_leases l WHERE l.bucket = p_bucket AND l.expires_at <= t;
  tokens := v;
END $$;

-- Settles many leases of one holder at once (the idle sweep), in bucket order so that two
-- transactions locking several buckets never wait on each other in a cycle (admission locks
-- `ip:` before `key:`, which sorts the same way).
CREATE FUNCTION anm_lease_settle(p_holder text, p_ttl_ms integer, p_buckets text[], p_capacity double precision[],
                                 p_per_sec double precision[], p_settle double precision[], p_unused double precision[])
RETURNS TABLE (bucket text, tokens double precision, others double precision)
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR r IN SELECT * FROM unnest(p_buckets, p_capacity, p_per_sec, p_settle, p_unused) AS x(b, c, s, st, u) ORDER BY x.b LOOP
    SELECT r.b, l.tokens, l.others INTO bucket, tokens, others FROM anm_lease(r.b, p_holder, r.c, r.s, 0, r.st, r.u, p_ttl_ms, NULL) l;
    RETURN NEXT;
  END LOOP;
END $$;

-- Claims an Idempotency-Key for a merchant and mode (ADR 0005); the same rules as in anm_gate.
CREATE FUNCTION anm_idem_claim(p_merchant text, p_mode text, p_key text, p_request_hash text, p_new_intent_id text,
                               p_takeover_after_ms integer,
                               OUT claim text, OUT intent_id text, OUT status integer, OUT headers jsonb, OUT body bytea)
LANGUAGE plpgsql AS $$
DECLARE
  rec idempotency_keys%ROWTYPE;
BEGIN
  INSERT INTO idempotency_keys AS i (merchant, mode, key, request_hash, state, intent_id)
  VALUES (p_merchant, p_mode, p_key, p_request_hash, 'in_flight', p_new_intent_id)
  ON CONFLICT ON CONSTRAINT idempotency_keys_pkey DO UPDATE
    SET request_hash = EXCLUDED.request_hash, state = 'in_flight', intent_id = EXCLUDED.intent_id,
        status = NULL, headers = NULL, body = NULL, created_at = now(), updated_at = now()
    -- an expired record (24 h) is gone for every purpose
    WHERE i.created_at < now() - interval '24 hours'
  RETURNING i.intent_id INTO intent_id;
  IF FOUND THEN
    claim := 'claimed';
    RETURN;
  END IF;
  SELECT * INTO rec FROM idempotency_keys i WHERE i.merchant = p_merchant AND i.mode = p_mode AND i.key = p_key FOR UPDATE;
  intent_id := rec.intent_id;
  IF rec.request_hash <> p_request_hash THEN
    claim := 'reused';
  ELSIF rec.state = 'done' THEN
    claim := 'replay';
    status := rec.status;
    headers := rec.headers;
    body := rec.body;
  ELSIF rec.updated_at < now() - make_interval(secs => p_takeover_after_ms / 1000.0) THEN
    -- The attempt that claimed it died; this retry finishes it on the same intent id.
    UPDATE idempotency_keys i SET updated_at = now() WHERE i.merchant = p_merchant AND i.mode = p_mode AND i.key = p_key;
    claim := 'claimed';
  ELSE
    claim := 'in_flight';
  END IF;
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
  p_ip_want double precision, p_ip_settle double precision, p_ip_unused double precision,
  p_key_hash text, p_key_capacity double precision, p_key_per_sec double precision,
  p_key_op boolean, p_key_want double precision, p_key_settle double precision, p_key_unused double precision,
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
      FROM anm_lease(p_ip_bucket, p_holder, p_ip_capacity, p_ip_per_sec, p_ip_want, p_ip_settle, p_ip_unused, p_ttl_ms, NULL) l;
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
      FROM anm_lease('key:' || key_id, p_holder, p_key_capacity, p_key_per_sec, p_key_want, p_key_settle, p_key_unused, p_ttl_ms, NULL) l;
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

-- Records the first responses of many Idempotency-Keys in one statement (requests finishing
-- together share a round trip). Asynchronous commit, as anm_idempotency_done (0002).
CREATE FUNCTION anm_idempotency_done_many(p_merchant text[], p_mode text[], p_key text[], p_status integer[], p_headers text[], p_body text[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE idempotency_keys i
     SET state = 'done', status = x.status, headers = x.headers::jsonb, body = convert_to(x.body, 'UTF8'), updated_at = now()
    FROM unnest(p_merchant, p_mode, p_key, p_status, p_headers, p_body) AS x(merchant, mode, key, status, headers, body)
   WHERE i.merchant = x.merchant AND i.mode = x.mode AND i.key = x.key;
END $$;
