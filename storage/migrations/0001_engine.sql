-- Actor engine: snapshots, journal, dedupe, timers, outbox (DESIGN.md §2).
CREATE TABLE actors (
  id              text PRIMARY KEY,
  kind            text NOT NULL,
  merchant        text,
  mode            text CHECK (mode IN ('live', 'test')),
  machine         text NOT NULL,
  machine_version integer NOT NULL,
  state           text NOT NULL,
  snapshot        jsonb NOT NULL,
  version         integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX actors_kind_state ON actors (kind, state);
CREATE INDEX actors_merchant ON actors (merchant, mode, kind, created_at DESC);

-- Append-only journal of every accepted event; replaying it rebuilds the snapshot.
CREATE TABLE actor_events (
  actor_id     text NOT NULL REFERENCES actors (id),
  seq          integer NOT NULL,
  event_id     text NOT NULL,
  event        jsonb NOT NULL,
  state_before text,
  state_after  text NOT NULL,
  at           timestamptz NOT NULL,
  PRIMARY KEY (actor_id, seq)
);

-- Dedupe by event id for the actor's lifetime; ignored events are recorded too.
CREATE TABLE processed_events (
  actor_id  text NOT NULL,
  event_id  text NOT NULL,
  outcome   text NOT NULL CHECK (outcome IN ('applied', 'ignored')),
  seq       integer,
  at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (actor_id, event_id)
);

-- Durable timers; generation = actor version that scheduled it, so stale firings are dropped.
CREATE TABLE timers (
  actor_id   text NOT NULL,
  name       text NOT NULL,
  kind       text NOT NULL,
  event_type text NOT NULL,
  fire_at    timestamptz NOT NULL,
  generation integer NOT NULL,
  fired_at   timestamptz,
  PRIMARY KEY (actor_id, name)
);
CREATE INDEX timers_due ON timers (fire_at);

-- Effects written in the same transaction as the transition; the relay publishes them.
CREATE TABLE outbox (
  id           bigserial PRIMARY KEY,
  actor_id     text NOT NULL,
  msg_id       text NOT NULL UNIQUE,
  subject      text NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX outbox_pending ON outbox (id) WHERE published_at IS NULL;
