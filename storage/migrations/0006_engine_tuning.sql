-- Every event rewrites its actor's row. Leaving room on each page lets PostgreSQL keep the new
-- version on the same page (HOT update), so the indexes are not touched when the state column
-- does not change — most events (depth updates) change only the snapshot.
ALTER TABLE actors SET (fillfactor = 70);
ALTER TABLE timers SET (fillfactor = 80);
