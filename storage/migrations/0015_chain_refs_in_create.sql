-- The chain reference index is written by the statement that creates the actor (a create
-- companion of the payment-intent and refund registrations, runtime/chain/chain-refs.ts),
-- with the values computed in the process. The row trigger it replaces ran a PL/pgSQL
-- function per insert: in bench:api, about 3 % of all the machine's CPU (AfterTriggerEndQuery),
-- some 0.04 ms of PostgreSQL CPU per create.
DROP TRIGGER IF EXISTS actors_chain_refs ON actors;
DROP FUNCTION IF EXISTS chain_refs_from_actor();
