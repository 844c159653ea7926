-- When a listing's endpoint was last probed for a takeover (ADR 0077). Every marketplace
-- process claims a probe here with one upsert that succeeds only once the cooldown since the
-- last one has passed, so the cooldown holds across processes, not per process. One row per
-- listing ever probed for a takeover: bounded by the listings.
CREATE TABLE IF NOT EXISTS listing_takeover_probes (
  resource_id text PRIMARY KEY,
  probed_at   timestamptz NOT NULL
);
