-- The purchase path (ADR 0044).
-- Marketplace actors (listings, purchases, executions) have no merchant, and the merchant
-- indexes serve only reads of one merchant's actors (`merchant = $1` implies the predicate).
-- Holding merchant actors alone, they cost a marketplace actor nothing: its quote inserts
-- into the primary key only, and so does each event that changes its state (such an update
-- is never HOT, since `state` is indexed).
DROP INDEX actors_merchant;
CREATE INDEX actors_merchant ON actors (merchant, mode, kind, created_at DESC) WHERE merchant IS NOT NULL;
DROP INDEX actors_merchant_state;
CREATE INDEX actors_merchant_state ON actors (merchant, mode, kind, state) WHERE merchant IS NOT NULL;

-- A purchase's first response (about 2.5 KB, most of it the seller leg in base64, twice) does
-- not compress, so pglz's attempt on every record was spent for nothing: bodies long enough
-- to leave the row are stored out of line as they are.
ALTER TABLE idempotency_keys ALTER COLUMN body SET STORAGE EXTERNAL;
