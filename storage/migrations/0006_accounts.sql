-- Accounts: server-side sessions of the dashboard and the operator console, failed-login
-- records for the lockout, and the merchant's public handle (DESIGN §7).

-- A session is found by the SHA-256 of its cookie token, so a read of this table gives no
-- usable cookie. `principal` is the merchant id (kind 'merchant') or the operator's name
-- (kind 'operator'); NULL for a visitor who has not logged in yet, whose session carries only
-- the CSRF secret of the login form and is replaced on login (no fixation). `id` is the
-- public handle shown in a session list and used to revoke one.
CREATE TABLE sessions (
  token_hash   text PRIMARY KEY,
  id           text NOT NULL UNIQUE,
  kind         text NOT NULL CHECK (kind IN ('merchant', 'operator')),
  principal    text,
  csrf_secret  text NOT NULL,
  data         jsonb NOT NULL DEFAULT '{}',
  ip           text,
  user_agent   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_principal ON sessions (kind, principal) WHERE principal IS NOT NULL;
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);

-- Failed logins, one row each, kept 15 minutes: `scope` is 'account' or 'ip', `subject` the
-- normalised email (or operator name) or the client address.
CREATE TABLE login_failures (
  kind    text NOT NULL,
  scope   text NOT NULL CHECK (scope IN ('account', 'ip')),
  subject text NOT NULL,
  at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_subject ON login_failures (kind, scope, subject, at);

-- The public handle (`[a-z0-9-]{3,40}`) used in /p/{handle}/{slug} and /shop/{handle}.
-- Existing merchants get one from their name and id; new ones from their name.
ALTER TABLE merchants ADD COLUMN handle text;
UPDATE merchants
   SET handle = left(trim(both '-' from regexp_replace(lower(name), '[^a-z0-9]+', '-', 'g')), 30) || '-' || substr(id, 5, 6);
ALTER TABLE merchants ALTER COLUMN handle SET NOT NULL;
ALTER TABLE merchants ADD CONSTRAINT merchants_handle_format CHECK (handle ~ '^[a-z0-9-]{3,40}$');
CREATE UNIQUE INDEX merchants_handle ON merchants (handle);

-- Payout address verification from the dashboard (DESIGN §7): the challenge issued for proving
-- the address (`anmpay payout verify`), replaced when the address changes.
ALTER TABLE payout_addresses ADD COLUMN challenge text;
