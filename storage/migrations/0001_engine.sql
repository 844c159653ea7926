-- Actor engine: snapshots, journal, dedupe, timers, outbox (DESIGN.md §2).
-- Every table here is actor-scoped: `actor_id` (the actor's `id` in `actors`) is part of each
-- primary key, so the tables can be distributed by it, co-located, with each event's
-- transaction on one shard ("Past one PostgreSQL").

-- Every event rewrites its actor's row. Room on each page lets PostgreSQL keep the new version
-- on the same page (HOT update), so the indexes are not touched when the state column does not
-- change: most events (depth updates) change only the snapshot.
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
) WITH (fillfactor = 70);
CREATE INDEX actors_merchant ON actors (merchant, mode, kind, created_at DESC);
-- Balance and the status filter read one merchant's intents by state.
CREATE INDEX actors_merchant_state ON actors (merchant, mode, kind, state);

-- Append-only journal of every accepted event; replaying it rebuilds the snapshot. No foreign
-- key to actors: the engine writes a journal row only in the statement that inserts or updates
-- that actor's row under its lock, so the referential check (a query under a key-share lock
-- per row) could never fail and cost PostgreSQL CPU on every event (ADR 0012).
CREATE TABLE actor_events (
  actor_id     text NOT NULL,
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
) WITH (fillfactor = 80);
CREATE INDEX timers_due ON timers (fire_at);

-- Effects written in the same transaction as the transition; the relay publishes them.
-- The key leads with `id` so that inserts append at the index's right edge. A message id is
-- unique by construction (actor id, version and position, or the id of the event it carries:
-- runtime/engine/effect-plan.ts) and nothing looks rows up by it (JetStream dedupes by it), so
-- it has no index: a unique one cost two b-tree inserts per row on the create path.
CREATE TABLE outbox (
  id           bigserial,
  actor_id     text NOT NULL,
  msg_id       text NOT NULL,
  subject      text NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  PRIMARY KEY (id, actor_id)
);
CREATE INDEX outbox_pending ON outbox (id) WHERE published_at IS NULL;
