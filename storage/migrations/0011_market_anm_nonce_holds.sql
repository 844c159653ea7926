-- Account nonces of ANM purchase legs, held by the purchase that verified them (ADR 0043).
-- A fee transfer waits, signed, until its seller transfer is settled; its nonce follows the
-- seller transfer's. While the purchase is open no other leg of the same payer may carry a
-- nonce it holds, or that leg could take the waiting fee's place on the chain. A hold whose
-- purchase has ended is free to be taken again.
CREATE TABLE IF NOT EXISTS market_anm_nonce_holds (
  payer     text NOT NULL,             -- anm1… address of the transfer's sender
  nonce     numeric(20,0) NOT NULL,    -- the transfer's account nonce (u64)
  intent_id text NOT NULL,
  leg       text NOT NULL CHECK (leg IN ('seller', 'fee')),
  tx_hash   text NOT NULL,
  PRIMARY KEY (payer, nonce)
);
