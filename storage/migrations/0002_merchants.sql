-- Merchants, API keys, idempotency records, shared rate buckets, service settings (issue 3).

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

-- Balance and the status filter read one merchant's intents by state.
CREATE INDEX actors_merchant_state ON actors (merchant, mode, kind, state);

-- Tokens in a bucket after refilling from `since` to `now_`, capped at capacity.
CREATE FUNCTION anm_refill(tokens double precision, since timestamptz, now_ timestamptz, capacity double precision, per_sec double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE AS $$
  SELECT least(capacity, tokens + greatest(0, extract(epoch FROM now_ - since)::double precision) * per_sec)
$$;

-- Takes one token when the bucket holds one; returns whether it did and what is left. The
-- row almost always exists, so UPDATE comes first (cheaper than INSERT … ON CONFLICT).
CREATE FUNCTION anm_take_token(p_bucket text, p_capacity double precision, p_per_sec double precision,
                               OUT ok boolean, OUT tokens double precision)
LANGUAGE plpgsql AS $$
BEGIN
  -- Every expression reads the locked row itself (no self-join), so a concurrent take
  -- re-evaluates against the newest version instead of losing an update.
  UPDATE rate_buckets AS b SET
    taken = anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) >= 1,
    tokens = CASE WHEN anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) >= 1
                  THEN anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) - 1
                  ELSE anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) END,
    updated_at = greatest(b.updated_at, now())
  WHERE b.bucket = p_bucket
  RETURNING b.taken, b.tokens INTO ok, tokens;
  IF FOUND THEN
    RETURN;
  END IF;
  INSERT INTO rate_buckets AS b (bucket, tokens, taken, updated_at)
  VALUES (p_bucket, p_capacity - 1, p_capacity >= 1, now())
  ON CONFLICT (bucket) DO UPDATE SET
    taken = anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) >= 1,
    tokens = CASE WHEN anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) >= 1
                  THEN anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) - 1
                  ELSE anm_refill(b.tokens, b.updated_at, now(), p_capacity, p_per_sec) END,
    updated_at = greatest(b.updated_at, now())
  RETURNING b.taken, b.tokens INTO ok, tokens;
END $$;

-- Everything a merchant API request needs before its handler, in one round trip:
--   1. the IP bucket (a refusal stops here: the key's quota is not touched);
--   2. the secret key by its keyed hash, its merchant and the merchant's defaults;
--   3. the key's bucket;
--   4. optionally, claim an Idempotency-Key (ADR 0005) or read one intent snapshot.
-- The writes are buckets (unlogged) and idempotency claims; a lost claim only lets a client
-- retry run again, and the intent's own transaction flushes the WAL past it, so commit is
-- asynchronous: a hot bucket row is not held across an fsync.
CREATE FUNCTION anm_gate(
  p_ip text, p_ip_capacity double precision, p_ip_per_sec double precision,
  p_key_hash text, p_key_capacity double precision, p_key_per_sec double precision,
  p_idem_key text, p_request_hash text, p_new_intent_id text, p_takeover_after_ms integer,
  p_read_id text
) RETURNS TABLE (
  ip_ok boolean, ip_tokens double precision,
  key_id text, merchant text, mode text, merchant_status text,
  success_url text, cancel_url text, payout_address text,
  key_ok boolean, key_tokens double precision,
  claim text, idem_request_hash text, idem_intent_id text, idem_status integer, idem_headers jsonb, idem_body bytea,
  read_state text, read_snapshot jsonb
) LANGUAGE plpgsql AS $$
DECLARE
  rec idempotency_keys%ROWTYPE;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT t.ok, t.tokens INTO ip_ok, ip_tokens FROM anm_take_token('ip:' || p_ip, p_ip_capacity, p_ip_per_sec) t;
  IF NOT ip_ok OR p_key_hash IS NULL THEN
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
  SELECT t.ok, t.tokens INTO key_ok, key_tokens FROM anm_take_token('key:' || key_id, p_key_capacity, p_key_per_sec) t;
  IF NOT key_ok THEN
    RETURN NEXT;
    RETURN;
  END IF;

  IF p_idem_key IS NOT NULL THEN
    INSERT INTO idempotency_keys AS i (merchant, mode, key, request_hash, state, intent_id)
    VALUES (merchant, mode, p_idem_key, p_request_hash, 'in_flight', p_new_intent_id)
    ON CONFLICT ON CONSTRAINT idempotency_keys_pkey DO UPDATE
      SET request_hash = EXCLUDED.request_hash, state = 'in_flight', intent_id = EXCLUDED.intent_id,
          status = NULL, headers = NULL, body = NULL, created_at = now(), updated_at = now()
      -- an expired record (24 h) is gone for every purpose
      WHERE i.created_at < now() - interval '24 hours'
    RETURNING i.intent_id INTO idem_intent_id;
    IF FOUND THEN
      claim := 'claimed';
    ELSE
      SELECT * INTO rec FROM idempotency_keys i
       WHERE i.merchant = anm_gate.merchant AND i.mode = anm_gate.mode AND i.key = p_idem_key FOR UPDATE;
      idem_request_hash := rec.request_hash;
      idem_intent_id := rec.intent_id;
      IF rec.request_hash <> p_request_hash THEN
        claim := 'reused';
      ELSIF rec.state = 'done' THEN
        claim := 'replay';
        idem_status := rec.status;
        idem_headers := rec.headers;
        idem_body := rec.body;
      ELSIF rec.updated_at < now() - make_interval(secs => p_takeover_after_ms / 1000.0) THEN
        -- The attempt that claimed it died; this retry finishes it on the same intent id.
        UPDATE idempotency_keys i SET updated_at = now()
         WHERE i.merchant = anm_gate.merchant AND i.mode = anm_gate.mode AND i.key = p_idem_key;
        claim := 'claimed';
      ELSE
        claim := 'in_flight';
      END IF;
    END IF;
  END IF;

  IF p_read_id IS NOT NULL THEN
    SELECT a.state, a.snapshot INTO read_state, read_snapshot
      FROM actors a
     WHERE a.id = p_read_id AND a.kind = 'payment_intent' AND a.merchant = anm_gate.merchant AND a.mode = anm_gate.mode;
  END IF;
  RETURN NEXT;
END $$;

-- Records the first response of an Idempotency-Key. Asynchronous commit for the reason above:
-- if the record is lost, the key stays in flight and a later retry takes it over and
-- re-applies the same create event, which the actor dedupes.
CREATE FUNCTION anm_idempotency_done(p_merchant text, p_mode text, p_key text, p_status integer, p_headers jsonb, p_body bytea)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE idempotency_keys SET state = 'done', status = p_status, headers = p_headers, body = p_body, updated_at = now()
   WHERE merchant = p_merchant AND mode = p_mode AND key = p_key;
END $$;
