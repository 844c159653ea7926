-- Signed webhooks (issue 5, DESIGN.md §4, ADR 0009): endpoints and secrets per merchant and
-- mode, the events received from the outbox, one delivery per (event, endpoint), every attempt.
-- The three queue tables carry no foreign keys on purpose: each is written by one statement
-- that inserts parent and child together, and an FK check would take a KEY SHARE lock on the
-- endpoint row for every delivery (multixact contention on a handful of hot rows).

-- One endpoint per merchant and mode; `set` changes its URL, a 410 disables it.
CREATE TABLE webhook_endpoints (
  id              text PRIMARY KEY,
  merchant        text NOT NULL,
  mode            text NOT NULL CHECK (mode IN ('live', 'test')),
  url             text NOT NULL,
  status          text NOT NULL CHECK (status IN ('active', 'disabled')),
  disabled_reason text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant, mode)
);

-- Signing secrets. The current one has expires_at NULL; rotation sets the previous ones to
-- expire after the grace period, during which every active secret signs each delivery.
CREATE TABLE webhook_secrets (
  id         bigserial PRIMARY KEY,
  endpoint   text NOT NULL REFERENCES webhook_endpoints (id),
  secret     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz
);
CREATE INDEX webhook_secrets_endpoint ON webhook_secrets (endpoint, created_at DESC);

-- Every event received from the bus, once (the id names the fact). `skipped` = the merchant
-- had no endpoint for that mode when the event arrived: a later endpoint does not get it.
CREATE TABLE webhook_events (
  id          text PRIMARY KEY,
  merchant    text NOT NULL,
  mode        text NOT NULL,
  type        text NOT NULL,
  created     bigint NOT NULL,
  actor_id    text,
  body        text NOT NULL,
  skipped     boolean NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

-- One row per (event, endpoint): the work queue. A claim bumps `attempts` and sets
-- `lease_until` (not indexed, so the claim is a HOT update); while the lease runs no other
-- worker takes the row, and `attempts` fences the result: a late writer of an older attempt
-- changes nothing. A worker that dies leaves the row to come due again when the lease ends.
CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,
  event_id        text NOT NULL,
  endpoint        text NOT NULL,
  merchant        text NOT NULL,
  mode            text NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'disabled')),
  attempts        integer NOT NULL DEFAULT 0,
  manual          boolean NOT NULL DEFAULT false,
  next_attempt_at timestamptz,
  lease_until     timestamptz,
  last_status     integer,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  completed_at    timestamptz,
  UNIQUE (event_id, endpoint)
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries (merchant, mode, created_at DESC);

-- The delivery log: one row per HTTP attempt, whatever its outcome. An attempt whose process
-- died before writing its result is logged by the next claim (no status, latency unknown).
CREATE TABLE webhook_attempts (
  id           bigserial PRIMARY KEY,
  delivery     text NOT NULL,
  attempt      integer NOT NULL,
  manual       boolean NOT NULL DEFAULT false,
  url          text NOT NULL,
  status       integer,
  latency_ms   integer,
  response     text,
  error        text,
  signed_at    bigint,
  at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery, attempt);
