/**
 * The USDC lane behind one port: verify a signed `exact` leg against what is expected, and
 * settle it on the ledger. Every settlement is reported to `onSettled`, so the purchase
 * whose seller leg this was learns it was paid, whoever settled it.
 */
import { MARKET_LANES } from '../../../machines/money/market.ts';
import { laneNetwork } from '../requirements.ts';
import { asExactEvmPayload, checkAccepted, checkAuthorization, domainOf, type Check, type EvmDomain, type ExactEvmPayload } from './eip3009.ts';
import type { AuthorizationState, BoundLeg, SettleResult, TransferTerms, UsdcLedger, UsdcToken } from './usdc-ledger.ts';

export interface LegExpectation {
  payTo: string;
  amount: bigint;
}

/** `unavailable`: the ledger could not be read (its node down); the leg itself may be fine. */
export type LegCheck = (Check & { ok: false; unavailable?: true }) | { ok: true; payer: string; payload: ExactEvmPayload };

/**
 * `transfer`: the settled authorization's terms (addresses and nonce lowercase), so the listener
 * can tell a leg's own transfer from another that used its nonce. `bound`: the purchase leg the
 * settler knows the authorization backs (else the listener looks it up).
 */
export type SettledListener = (transfer: TransferTerms, tx: string, bound?: BoundLeg) => Promise<void>;

/** An authorization's transfer terms as settlements report them. */
export const termsOf = (a: TransferTerms): TransferTerms => ({ from: a.from.toLowerCase(), to: a.to.toLowerCase(), value: BigInt(a.value).toString(), nonce: a.nonce.toLowerCase() });

/** Authorization states read ahead, by `stateKey`. */
export type KnownStates = ReadonlyMap<string, AuthorizationState>;

export const stateKey = (authorizer: string, nonce: string): string => `${authorizer.toLowerCase()}:${nonce.toLowerCase()}`;

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';

export class UsdcLane {
  private readonly listeners: SettledListener[] = [];

  /** The EIP-712 domain legs are signed under: the token's. */
  readonly domain: EvmDomain;

  constructor(
    readonly ledger: UsdcLedger,
    private readonly clock: () => number = Date.now,
  ) {
    this.domain = domainOf(ledger.token);
  }

  /** The token this lane pays in: quotes name its address and EIP-712 domain. */
  get token(): UsdcToken {
    return this.ledger.token;
  }

  /** The lane's CAIP-2 network: its token's chain. */
  get network(): `${string}:${string}` {
    return laneNetwork('USDC', this.ledger.token);
  }

  onSettled(fn: SettledListener): void {
    this.listeners.push(fn);
  }

  nowS(): number {
    return Math.floor(this.clock() / 1000);
  }

  /** Requirements, authorization, signature, then the ledger: nonce unused and balance enough. */
  async verify(accepted: Record<string, unknown> | undefined, rawPayload: unknown, e: LegExpectation, opts: { allowUsedNonce?: boolean } = {}): Promise<LegCheck> {
    const signed = await this.checkSigned(accepted, rawPayload, e);
    if (!signed.ok) return signed;
    return (await this.checkLedger([{ ...signed, amount: e.amount, allowUsedNonce: opts.allowUsedNonce }]))[0]!;
  }

  /** Requirements, authorization and signature: everything `verify` checks but the ledger. */
  async checkSigned(accepted: Record<string, unknown> | undefined, rawPayload: unknown, e: LegExpectation): Promise<LegCheck> {
    const accept = checkAccepted(accepted, this.expected(e));
    if (accept && !accept.ok) return accept;
    return this.checkPayload(rawPayload, e, this.domain);
  }

  /**
   * The authorization and its signature over `domain`: the lane's token unless the caller's
   * requirements name another (the facilitator checks a signature over the domain its
   * requirements name, as the SDK's does, and only then whether that is this lane's token).
   */
  async checkPayload(rawPayload: unknown, e: LegExpectation, domain: EvmDomain): Promise<LegCheck> {
    const payload = asExactEvmPayload(rawPayload);
    if (!payload) return { ok: false, reason: 'invalid_payload', message: 'payload is not an EIP-3009 authorization with its signature' };
    const auth = await checkAuthorization(payload, this.expected(e), this.nowS(), domain);
    if (!auth.ok) return auth;
    return { ok: true, payer: auth.payer, payload };
  }

  private expected(e: LegExpectation) {
    return { scheme: MARKET_LANES.USDC.legScheme, network: this.network, asset: this.token.address, payTo: e.payTo, amount: e.amount };
  }

  /**
   * The ledger's part of `verify` for signed legs, all read at once (a purchase's two legs in
   * one statement on the simulated ledger): each nonce unused, each payer's balance enough.
   * `balance` is what the ledger holds for the payer, for checks across legs. `known`: states
   * read earlier in this request (with the purchase's claim, ADR 0044), used when they cover
   * every leg.
   */
  async checkLedger(legs: ReadonlyArray<{ payer: string; payload: ExactEvmPayload; amount: bigint; allowUsedNonce?: boolean | undefined }>, known?: KnownStates): Promise<Array<LegCheck & { balance?: bigint }>> {
    let states: AuthorizationState[];
    try {
      const auths = legs.map((l) => ({ authorizer: l.payer, nonce: l.payload.authorization.nonce }));
      const read = known && auths.map((a) => known.get(stateKey(a.authorizer, a.nonce)));
      states = read?.every((x) => x !== undefined) ? read : await this.readStates(auths);
    } catch (err) {
      // The SDK's facilitator answers a chain it cannot read with this reason.
      const down = { ok: false as const, reason: 'invalid_exact_evm_transaction_simulation_failed', message: `the ledger could not be read: ${firstLine(err)}`, unavailable: true as const };
      return legs.map(() => down);
    }
    return legs.map((l, i) => {
      const { used, balance } = states[i]!;
      if (used && !l.allowUsedNonce) return { ok: false, reason: 'invalid_exact_evm_nonce_already_used', message: 'this authorization nonce was already used' };
      // A used nonce being settled again is answered from the ledger (idempotent), not re-funded.
      if (!used && balance < l.amount) return { ok: false, reason: 'invalid_exact_evm_insufficient_balance', message: 'the payer balance is below the amount' };
      return { ok: true, payer: l.payer, payload: l.payload, balance };
    });
  }

  /** Nonce states and balances of authorizations, in one read where the ledger can. */
  readStates(auths: ReadonlyArray<{ authorizer: string; nonce: string }>): Promise<AuthorizationState[]> {
    const ledger = this.ledger;
    if (ledger.authorizationStates) return ledger.authorizationStates(auths);
    return Promise.all(auths.map(async (a) => {
      const [used, balance] = await Promise.all([ledger.authorizationState(a.authorizer, a.nonce), ledger.balanceOf(a.authorizer)]);
      return { used, balance };
    }));
  }

  /** Settles a verified leg (its authorization and signature) on the ledger; `bound`: the purchase leg it backs, when known. */
  async settle(p: ExactEvmPayload, bound?: BoundLeg): Promise<SettleResult> {
    const a = p.authorization;
    const r = await this.ledger.transferWithAuthorization(a, this.nowS(), p.signature);
    if (r.ok && !r.replay) for (const fn of this.listeners) await fn(termsOf(a), r.tx, bound);
    return r;
  }
}
