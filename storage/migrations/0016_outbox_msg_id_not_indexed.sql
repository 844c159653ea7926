-- An outbox row's message id is made unique by construction (actor id, version and position,
-- or the id of the event it carries, runtime/engine/effect-plan.ts), and nothing looks rows up
-- by it: JetStream dedupes by it. Its unique index cost two b-tree inserts per row (the row,
-- then its "published" version) on the create path.
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_msg_id_key;
