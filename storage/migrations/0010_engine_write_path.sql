-- The engine's write path (ADR 0012), measured on the 2-core machine:
-- * The journal's foreign key to actors ran a referential check (a query under a key-share
--   lock) for every journal row. The engine writes a journal row only in the statement that
--   inserts or updates that actor's row under its lock, so the check can never fail; it cost
--   PostgreSQL CPU on every event.
-- * actors_kind_state was read by no query, and every state change updated it.
ALTER TABLE actor_events DROP CONSTRAINT IF EXISTS actor_events_actor_id_fkey;
DROP INDEX IF EXISTS actors_kind_state;
