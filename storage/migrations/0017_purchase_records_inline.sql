-- The purchase path (ADR 0055). A purchase's first response (about 2.6 KB) made its record
-- longer than the 2 KB past which PostgreSQL moves long values out of line, so each record cost
-- two TOAST chunks and two TOAST index entries. Kept in the row, the record is one heap write.
-- A row that would not fit a page still has its body moved out of line (STORAGE EXTERNAL).
ALTER TABLE idempotency_keys SET (toast_tuple_target = 8160);
