/** The statements of ActorHost's locked path and its bookkeeping (the write itself: write-statement.ts). */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';

// An event the cached row does not accept, recorded only if the row still has that version
// (no row back: it moved on, and the locked path decides).
export const MARK_IGNORED_AT_VERSION = `INSERT INTO processed_events (actor_id, event_id, outcome)
  SELECT $1, $2, 'ignored' WHERE EXISTS (SELECT 1 FROM actors WHERE id = $1 AND version = $3)
  ON CONFLICT (actor_id, event_id) DO UPDATE SET at = processed_events.at RETURNING outcome`;

/** A row of SELECT_LOCKED. */
export interface LockedRow {
  version: number;
  state: string;
  snapshot: PersistedSnapshot;
  merchant: string | null;
  mode: string | null;
}

export const SELECT_LOCKED = `SELECT version, state, snapshot, merchant, mode FROM actors WHERE id = $1 FOR UPDATE`;

// A create whose actor exists: the same create again (a duplicate) if it is the journal's first entry.
export const SELECT_CREATED_BY = `SELECT 1 FROM actor_events WHERE actor_id = $1 AND seq = 1 AND event_id = $2`;

// Only timer firings need this before the transition (to drop stale generations).
export const SELECT_TIMER = `SELECT generation FROM timers WHERE actor_id = $1 AND name = $2`;

// An event that changed nothing; the returned outcome says whether it had been applied before.
export const MARK_IGNORED = `INSERT INTO processed_events (actor_id, event_id, outcome) VALUES ($1, $2, 'ignored')
  ON CONFLICT (actor_id, event_id) DO UPDATE SET at = processed_events.at RETURNING outcome`;
