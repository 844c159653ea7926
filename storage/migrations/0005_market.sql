-- The marketplace (DESIGN §5). Listings and purchases are actors (engine tables); these are
-- the simulated EIP-3009 USDC ledger of the embedded lane and the nonces the marketplace
-- has bound to purchase legs. Depends only on the engine tables. Idempotent.

-- Balances of the simulated USDC token, atomic units (uint256 fits numeric(78,0)).
CREATE TABLE IF NOT EXISTS usdc_balances (
  address  text PRIMARY KEY,           -- lowercase 0x address
  balance  numeric(78,0) NOT NULL CHECK (balance >= 0)
);

-- EIP-3009 authorizationState: a (authorizer, nonce) pair is used once, ever.
CREATE TABLE IF NOT EXISTS usdc_authorizations (
  authorizer  text NOT NULL,
  nonce       text NOT NULL,           -- 0x + 64 hex
  recipient   text NOT NULL,
  value       numeric(78,0) NOT NULL,
  tx_hash     text NOT NULL UNIQUE,
  used_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (authorizer, nonce)
);

-- Every nonce a purchase leg carries, bound to its intent at verification: a leg is never
-- accepted by a second purchase, and a settlement seen on the lane finds its purchase.
CREATE TABLE IF NOT EXISTS market_leg_nonces (
  lane       text NOT NULL,            -- 'USDC' | 'ANM'
  authorizer text NOT NULL,
  nonce      text NOT NULL,
  intent_id  text NOT NULL,
  leg        text NOT NULL CHECK (leg IN ('seller', 'fee')),
  PRIMARY KEY (lane, authorizer, nonce)
);
CREATE INDEX IF NOT EXISTS market_leg_nonces_intent ON market_leg_nonces (intent_id);
