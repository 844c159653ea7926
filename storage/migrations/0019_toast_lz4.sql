-- Long values written on every transition are compressed with LZ4 instead of PostgreSQL's
-- default pglz (ADR 0109). An ANM purchase's snapshot holds the buyer's signed fee transfer (an
-- ML-DSA-65 signature and public key, about 11 KB of hex that barely compresses), and pglz
-- spent more CPU trying than the rest of the statement. LZ4 gives up on such data quickly and
-- compresses ordinary JSON about as well. The setting applies to values written from now on.
-- A server built without LZ4 (the embedded PGlite) keeps pglz.
DO $$
BEGIN
  ALTER TABLE actors ALTER COLUMN snapshot SET COMPRESSION lz4;
  ALTER TABLE actor_events ALTER COLUMN event SET COMPRESSION lz4;
  ALTER TABLE outbox ALTER COLUMN payload SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END
$$;
