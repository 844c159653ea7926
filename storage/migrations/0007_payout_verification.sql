-- Payout address verification from the dashboard (DESIGN §7): the challenge issued for proving
-- the address (`anmpay payout verify`); `verified_at` is set when a proof for it checks out,
-- and cleared with the challenge replaced when the address changes. Its own file because
-- 0006_accounts.sql was already applied by the time this came.
ALTER TABLE payout_addresses ADD COLUMN challenge text;
