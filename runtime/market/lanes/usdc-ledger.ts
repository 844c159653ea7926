/**
 * The ledger behind the USDC lane (DESIGN §5 "Lanes"): an EIP-3009 token as the lane sees
 * it. The embedded default is the simulated ledger in the database (usdc-sim.ts); the real
 * one is any EVM JSON-RPC through viem (usdc-viem.ts). Signatures are checked by the lane
 * before a ledger is asked to settle.
 */
import { USDC_TOKEN } from '../../../machines/money/market.ts';
import type { SqlParam } from '../../../storage/db.ts';
import type { Config } from '../../config.ts';
import type { CreateCompanion } from '../../engine/actor-types.ts';
import type { Authorization } from './eip3009.ts';

/** The token and its EIP-712 domain: the quote's `asset` and `extra.name/version` follow it. */
export interface UsdcToken {
  address: string;
  name: string;
  version: string;
  chainId: number;
}

/** The token as configured (USDC_TOKEN_*, and the chain of USDC_NETWORK); USDC on Base for what is unset. */
export function configuredUsdcToken(c: Partial<Pick<Config, 'USDC_TOKEN_ADDRESS' | 'USDC_TOKEN_NAME' | 'USDC_TOKEN_VERSION' | 'USDC_NETWORK'>>): UsdcToken {
  return {
    address: c.USDC_TOKEN_ADDRESS ?? USDC_TOKEN.address,
    name: c.USDC_TOKEN_NAME ?? USDC_TOKEN.name,
    version: c.USDC_TOKEN_VERSION ?? USDC_TOKEN.version,
    chainId: c.USDC_NETWORK ?? USDC_TOKEN.chainId,
  };
}

/** A failure is `transient` when the authorization may still settle (the node unreachable, no receipt yet): it is tried again, never recorded as failed. */
export type SettleResult = { ok: true; tx: string; replay: boolean } | { ok: false; reason: string; message?: string; transient?: boolean };

/** The purchase leg an authorization is bound to (`market_leg_nonces`), when its settler knows it. */
export interface BoundLeg {
  intent_id: string;
  leg: 'seller' | 'fee';
}

/** An authorization's nonce state and its authorizer's balance, read together. */
export interface AuthorizationState {
  used: boolean;
  balance: bigint;
}

/** `authorizationStates` as part of another statement: `sql(n)` is a scalar expression over parameters $n on. */
export interface StatesRead {
  sql(firstParam: number): string;
  params: SqlParam[];
  /** The expression's value as read from the row: the states in the order asked. */
  parse(value: unknown): AuthorizationState[];
  /** The same read among other claims' reads in one statement (ADR 0093), where the ledger has that form. */
  batch?: { form: StatesBatchForm; auths: ReadonlyArray<{ authorizer: string; nonce: string }> };
}

/**
 * Several `StatesRead`s in one statement (ADR 0093): reads of one form (one `name`) go together.
 * `sql(n)` is a subquery of rows `(c integer, states json)` over parameters $n on: for each read
 * `c` (1-based, in the order given to `params`) that names authorizations, the value its own
 * `sql` gives, which its own `parse` takes.
 */
export interface StatesBatchForm {
  readonly name: string;
  sql(firstParam: number): string;
  /** The parameters of `sql`; undefined: that position reads nothing. */
  params(reads: ReadonlyArray<StatesRead | undefined>): SqlParam[];
}

/** A transfer as an EIP-3009 authorization names it: who pays whom how much, under which nonce. */
export interface TransferTerms {
  from: string;
  to: string;
  /** Atomic units, decimal. */
  value: string;
  nonce: string;
}

/**
 * What used a transfer's nonce; `authorizationState` says only that something did. `settled`:
 * that very transfer (its transaction). `spent`: anything else, another transfer under the same
 * nonce or `cancelAuthorization`, so this transfer can never happen (`reason` says which, for
 * operators). `unknown`: the ledger says used but shows no record of how yet (a node whose logs
 * lag its state): asked again later, never taken as either.
 */
export type NonceUse = { state: 'unused' } | { state: 'settled'; tx: string } | { state: 'spent'; reason: string } | { state: 'unknown' };

export interface UsdcLedger {
  readonly token: UsdcToken;
  /** Addresses that submit settlements (the facilitator's `signers`); none for the simulation. */
  readonly signers: readonly string[];
  balanceOf(address: string): Promise<bigint>;
  /** EIP-3009 `authorizationState(authorizer, nonce)`: true once used, by any transfer, or cancelled (`nonceUses` tells which). */
  authorizationState(authorizer: string, nonce: string): Promise<boolean>;
  /**
   * `authorizationState` and `balanceOf(authorizer)` of several authorizations in one read,
   * for a ledger that can (the simulated one: one statement for both legs of a purchase).
   * Without it the lane asks each question on its own.
   */
  authorizationStates?(auths: ReadonlyArray<{ authorizer: string; nonce: string }>): Promise<AuthorizationState[]>;
  /**
   * The same read as an expression for another statement to carry (the simulated ledger's, in
   * the purchase's idempotency claim: ADR 0044), for a ledger kept in the same database.
   */
  authorizationStatesRead?(auths: ReadonlyArray<{ authorizer: string; nonce: string }>): StatesRead;
  /**
   * `transferWithAuthorization` as part of the statement that records it (ADR 0052), for a
   * ledger kept in the same database: its CTEs move the funds only when that statement's event
   * is applied, and its guard fails the whole statement when they did not (nonce used, balance
   * short), so the settlement and its record are written together or not at all. `tx` is the
   * transaction the settlement will have. Null when the authorization has expired.
   */
  settlementCompanion?(a: Authorization, nowS: number): { companion: CreateCompanion; tx: string } | null;
  /**
   * The ledger's part of a leg's check (nonce unused, the authorizer's balance at least
   * `amount`) as a guard on the statement that records the leg (ADR 0059), for a ledger kept in
   * the same database: that statement fails whole when the check does not hold, and the caller
   * then reads the ledger to say why. It reads and locks nothing it does not read anyway.
   */
  checkCompanion?(authorizer: string, nonce: string, amount: bigint): CreateCompanion;
  /** What used each transfer's nonce, in the order asked (in one read where the ledger can). */
  nonceUses(transfers: readonly TransferTerms[]): Promise<NonceUse[]>;
  /**
   * `transferWithAuthorization` of a verified authorization. The same authorization again
   * answers with its first transaction (`replay`); another use of a used nonce, a short
   * balance or an expired window fails with the x402 reason code.
   */
  transferWithAuthorization(a: Authorization, nowS: number, signature: string): Promise<SettleResult>;
}
