-- Merchants and their keys, Idempotency-Key records, rate limits (shared buckets and the
-- leases gateway processes take from them), service settings (issue 3, ADR 0004, ADR 0005).

CREATE TABLE merchants (
  id              text PRIMARY KEY,
  name            text NOT NULL,
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  email           text NOT NULL UNIQUE,
  -- scrypt$N$r$p$salt_b64$hash_b64
  password_hash   text NOT NULL,
  allowed_origins jsonb NOT NULL DEFAULT '[]',
  success_url     text,
  cancel_url      text,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- One payout address per merchant and mode. The test address is provisioned at merchant
-- creation with a key the service holds (test mode never moves real ANM); a live address is
-- the merchant's own and carries no secret here.
CREATE TABLE payout_addresses (
  merchant      text NOT NULL REFERENCES merchants (id),
  mode          text NOT NULL CHECK (mode IN ('live', 'test')),
  address       text NOT NULL,
  wallet_secret text,
  verified_at   timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant, mode)
);

-- Keys are stored only as HMAC-SHA256 under a server pepper; `prefix` is for display.
CREATE TABLE api_keys (
  id         text PRIMARY KEY,
  merchant   text NOT NULL REFERENCES merchants (id),
  mode       text NOT NULL CHECK (mode IN ('live', 'test')),
  kind       text NOT NULL CHECK (kind IN ('secret', 'publishable')),
  prefix     text NOT NULL,
  hash       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant);

-- Idempotency-Key records (24 h). `intent_id` is chosen before the first attempt runs, so a
-- retry that takes over an abandoned attempt reaches the same actor.
CREATE TABLE idempotency_keys (
  merchant     text NOT NULL,
  mode         text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  state        text NOT NULL CHECK (state IN ('in_flight', 'done')),
  intent_id    text,
  status       integer,
  headers      jsonb,
  body         bytea,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant, mode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Token buckets shared by every gateway process (ADR 0004). Unlogged: a crash resets the
-- buckets to full, which costs nothing worth a WAL write per request.
CREATE UNLOGGED TABLE rate_buckets (
  bucket     text PRIMARY KEY,
  tokens     double precision NOT NULL,
  taken      boolean NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE settings (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Tokens in a bucket after refilling from `since` to `now_`, capped at capacity.
CREATE FUNCTION anm_refill(tokens double precision, since timestamptz, now_ timestamptz, capacity double precision, per_sec double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE AS $$
  SELECT least(capacity, tokens + greatest(0, extract(epoch FROM now_ - since)::double precision) * per_sec)
$$;

-- Token leases (ADR 0004). Each gateway process (a "holder") takes tokens from the shared
-- bucket in chunks and hands them out locally; the shared row stays the authority. A holder
-- may keep several chunks of one bucket, each a row of its own released by name with its
-- unused tokens, and the bucket refills only up to what no live lease holds, so tokens in
-- the bucket plus unspent leased tokens never exceed the capacity.
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

-- Claims an Idempotency-Key for a merchant and mode (ADR 0005): a new key, or one whose record
-- expired (24 h), is claimed for `p_new_intent_id`, chosen before the first attempt runs so that
-- a retry taking over an abandoned attempt reaches the same actor; the same key with another
-- request is 'reused'; a finished one is a 'replay' of its first response; one still in flight
-- is 'in_flight' until its attempt has been silent for `p_takeover_after_ms`.
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

-- Admission with leases, in one round trip: an IP lease operation when this process has no
-- IP token left (a refusal stops here: the key's quota is not touched); the secret key by its
-- keyed hash with its merchant (always: revocation and suspension take effect at once); a key
-- lease operation when this process has no key token left; then optionally an Idempotency-Key
-- claim or one intent snapshot. When both tokens come from local leases this is a read (plus
-- the claim). `p_ip_bucket` NULL: no IP operation; `p_key_op` false: no key operation.
-- What it writes are buckets and leases (unlogged) and Idempotency-Key claims; a lost claim
-- only lets a client's retry run again, and the intent's own transaction flushes the WAL past
-- it, so it commits asynchronously: a hot bucket row is not held across an fsync.
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
  SELECT k.key_id, k.merchant, k.mode, k.merchant_status, k.success_url, k.cancel_url, k.payout_address
    INTO key_id, merchant, mode, merchant_status, success_url, cancel_url, payout_address
    FROM anm_secret_key(p_key_hash) k;
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

-- Records the first responses of many Idempotency-Keys in one statement (requests finishing
-- together share a round trip). Asynchronous commit: if a record is lost, the key stays in
-- flight and a later retry takes it over and re-applies the same create event, which the actor
-- dedupes. One primary-key update per element: as a join of the arrays with idempotency_keys,
-- the plan cached on a connection's first call (made while the table was small or empty, never
-- analyzed) was a hash join over a sequential scan, kept as the table grew to a day of keys
-- (docs/benchmarks.md). The cached generic plan is forced: seeing the array lengths, the
-- planner would price every custom plan below it and plan the statement afresh on every call,
-- though the plan is the same whatever the lengths.
CREATE FUNCTION anm_idempotency_done_many(p_merchant text[], p_mode text[], p_key text[], p_status integer[], p_headers text[], p_body text[])
RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR i IN 1 .. coalesce(array_length(p_key, 1), 0) LOOP
    UPDATE idempotency_keys
       SET state = 'done', status = p_status[i], headers = p_headers[i]::jsonb, body = convert_to(p_body[i], 'UTF8'), updated_at = now()
     WHERE merchant = p_merchant[i] AND mode = p_mode[i] AND key = p_key[i];
  END LOOP;
END $$;

-- The gate's batched key lookups (runtime/merchant/gate-sql.ts), one row per offered key with
-- its merchant and, when asked for, one intent snapshot. As a plain join of the offered hashes
-- with api_keys, the plan cached on a connection's first call, made while api_keys was small
-- and never analyzed (autovacuum is off on these machines), read every key on every call once
-- there were many (docs/benchmarks.md). Here each offered key is a LATERAL subquery
-- with LIMIT 1 (the planner keeps it per key), so every lookup is on a unique index (key hash,
-- merchant id, payout address, actor id) whatever the planner knows of the tables; the cached
-- generic plan is forced for the reason given at anm_idempotency_done_many.
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
