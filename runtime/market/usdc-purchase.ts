/**
 * Legs on the USDC lane (DESIGN §5 "Legs", "Purchase"): each an EIP-3009 authorization checked
 * against the quote, its signature, then the ledger (nonce unused, balance enough). A purchase
 * checks both signatures, then reads the ledger once for both legs (ADR 0034); its refusals
 * are the ones checking one whole leg after the other gives.
 */
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { VerifiedLeg } from '../../machines/purchase/events.ts';
import { MarketRefusal } from './errors.ts';
import type { ExactEvmPayload } from './lanes/eip3009.ts';
import { stateKey, type KnownStates, type UsdcLane } from './lanes/usdc-lane.ts';
import type { AuthorizationState, StatesRead } from './lanes/usdc-ledger.ts';
import type { CreateCompanion } from '../engine/actor-types.ts';
import { decodeLeg, type DecodedLeg } from './leg-codec.ts';

type LegName = 'seller' | 'fee';

/** A leg whose requirements and signature hold, before the ledger is asked. */
interface SignedLeg {
  name: LegName;
  payer: string;
  payload: ExactEvmPayload;
  amount: bigint;
  allowUsedNonce: boolean;
}

function refuse(leg: LegName, reason: string, message: string): never {
  if (reason === 'invalid_exact_evm_nonce_already_used') throw new MarketRefusal('leg_replayed', `${leg} leg: ${message}`, reason);
  throw new MarketRefusal('invalid_payment', `${leg} leg: ${message}`, reason);
}

async function signedLeg(lane: UsdcLane, ctx: PurchaseContext, leg: LegName, raw: unknown, known?: DecodedLeg | null): Promise<SignedLeg> {
  const decoded = known ?? decodeLeg(raw, lane.token);
  if (!decoded) return refuse(leg, 'invalid_payload', 'not base64 JSON of an x402 payment payload');
  const amount = BigInt(ctx[leg].amount);
  const c = await lane.checkSigned(decoded.accepted, decoded.payload, { payTo: ctx[leg].pay_to, amount });
  if (!c.ok) return refuse(leg, c.reason, c.message);
  // A purchase retried with the same legs after its seller leg settled is still answered.
  return { name: leg, payer: c.payer, payload: c.payload, amount, allowUsedNonce: ctx.legs?.[leg].nonce !== undefined };
}

/**
 * A routed execution's seller leg, the payment it forwards verbatim, against the quote's seller
 * leg as a purchase checks it: requirements, amount and payTo exact, time window, signature
 * (ADR 0087). The ledger is the seller's facilitator's to ask: a nonce used or a balance short
 * is the seller's refusal, which ends the execution SELLER_FAILED with no fee taken. `parsed`:
 * the header's document when the caller has decoded it already.
 */
export async function checkUsdcSellerLeg(lane: UsdcLane, ctx: PurchaseContext, raw: string, parsed?: unknown): Promise<void> {
  await signedLeg(lane, ctx, 'seller', raw, parsed === undefined ? undefined : decodeLeg(parsed, lane.token));
}

/** The ledger's answer for each leg, as a verified leg or the first refusal in leg order. */
async function ledgerChecked(lane: UsdcLane, ctx: PurchaseContext, legs: SignedLeg[], known?: KnownStates): Promise<Array<{ leg: VerifiedLeg; balance: bigint | undefined }>> {
  const checks = await lane.checkLedger(legs, known);
  return legs.map((l, i) => {
    const c = checks[i]!;
    if (!c.ok && c.unavailable) throw new MarketRefusal('ledger_unavailable', `${l.name} leg: ${c.message}`, c.reason);
    if (!c.ok) return refuse(l.name, c.reason, c.message);
    return { leg: verifiedOf(ctx, l.name, c.payer, c.payload), balance: c.balance };
  });
}

function verifiedOf(ctx: PurchaseContext, name: LegName, payer: string, payload: ExactEvmPayload): VerifiedLeg {
  const a = payload.authorization;
  return { pay_to: ctx[name].pay_to, amount: a.value, payer, nonce: a.nonce.toLowerCase(), valid_before: Number(a.validBefore) * 1000, payload: { ...payload } };
}

/** Both legs decoded once: by the read ahead, for the checks after it. */
export interface DecodedLegs {
  seller: DecodedLeg;
  fee: DecodedLeg;
}

/**
 * A ledger read for the claim to carry, and how its answer becomes what `verifyUsdcLegs` takes;
 * `decoded`: the legs it decoded to find what to read, which `verifyUsdcLegs` then takes too.
 */
export interface LedgerReadAhead {
  read: StatesRead;
  known(states: AuthorizationState[]): KnownStates;
  decoded: DecodedLegs;
}

/**
 * A read of the ledger states the raw legs name, for the purchase's claim to carry (ADR 0044):
 * on a ledger in this database (the simulated one) the purchase then sends no ledger read of
 * its own. Undefined for a ledger elsewhere, or legs that are not EIP-3009 authorizations.
 */
export function ledgerReadAhead(lane: UsdcLane, legs: { seller?: unknown; fee?: unknown }): LedgerReadAhead | undefined {
  const ledger = lane.ledger;
  if (!ledger.authorizationStatesRead) return undefined;
  const seller = decodeLeg(legs.seller, lane.token);
  const fee = decodeLeg(legs.fee, lane.token);
  const s = namedAuthorization(seller);
  const f = namedAuthorization(fee);
  if (!seller || !fee || !s || !f) return undefined;
  const auths = [s, f];
  return { read: ledger.authorizationStatesRead(auths), known: (states) => new Map(auths.map((a, i) => [stateKey(a.authorizer, a.nonce), states[i]!])), decoded: { seller, fee } };
}

/**
 * The (authorizer, nonce) a decoded leg names, before any check; null when it is not an
 * EIP-3009 authorization (an ANM leg, or malformed: the checks refuse it later, as they would
 * have).
 */
function namedAuthorization(leg: DecodedLeg | null): { authorizer: string; nonce: string } | null {
  const a = (leg?.payload as { authorization?: { from?: unknown; nonce?: unknown } } | undefined)?.authorization;
  if (typeof a?.from !== 'string' || typeof a.nonce !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(a.from) || !/^0x[0-9a-fA-F]{64}$/.test(a.nonce)) return null;
  return { authorizer: a.from, nonce: a.nonce };
}

/**
 * The ledger read of the (authorizer, nonce) a raw leg names, sent now so that it overlaps
 * what comes before the ledger check (the purchase's read, the signature's recovery). Its
 * states are used only for a leg whose signature proves that authorizer (`checkSigned`).
 * Undefined for a leg that names none (an ANM leg, or malformed: the checks refuse it later).
 */
export function legStatesAhead(lane: UsdcLane, raw: unknown, decoded = decodeLeg(raw, lane.token)): Promise<KnownStates | undefined> | undefined {
  const named = namedAuthorization(decoded);
  if (!named) return undefined;
  // A failed read is not an answer: the ledger is asked again after the signature check.
  return lane.readStates([named]).then(
    (states) => new Map([[stateKey(named.authorizer, named.nonce), states[0]!]]),
    () => undefined,
  );
}

/** One leg against the quote, its signature and the ledger; throws the refusal to answer with. */
export async function verifyUsdcLeg(lane: UsdcLane, ctx: PurchaseContext, leg: LegName, raw: unknown, decoded = decodeLeg(raw, lane.token), ahead = legStatesAhead(lane, raw, decoded)): Promise<VerifiedLeg> {
  // The recovery is synchronous and the read's statement is written to its socket on the next
  // ticks: without this turn the check would run before the read was even sent.
  if (ahead) await new Promise<void>((resolve) => setImmediate(resolve));
  const signed = await signedLeg(lane, ctx, leg, raw, decoded);
  const [checked] = await ledgerChecked(lane, ctx, [signed], await ahead);
  return checked!.leg;
}

/** A leg whose signature holds, with the ledger's part of its check left to the statement that records it. */
export interface LegForWrite {
  leg: VerifiedLeg;
  /** The ledger check as a guard for the recording statement (`UsdcLedger.checkCompanion`); null when it was read already. */
  companion: CreateCompanion | null;
  /** Reads the ledger and throws its refusal, if it has one: run before any refusal that came after the ledger's. */
  refusal: () => Promise<void>;
}

/**
 * One leg against the quote and its signature, for a ledger that checks inside the recording
 * statement (ADR 0059); null when the ledger cannot, and the leg is verified as a whole instead.
 */
export async function usdcLegForWrite(lane: UsdcLane, ctx: PurchaseContext, leg: LegName, raw: unknown, decoded: DecodedLeg | null): Promise<LegForWrite | null> {
  const check = lane.ledger.checkCompanion?.bind(lane.ledger);
  if (!check) return null;
  const signed = await signedLeg(lane, ctx, leg, raw, decoded);
  const verified = verifiedOf(ctx, leg, signed.payer, signed.payload);
  // A leg recorded already may use its nonce again: the guard knows no such leg, the read does.
  if (signed.allowUsedNonce) return { leg: (await ledgerChecked(lane, ctx, [signed]))[0]!.leg, companion: null, refusal: () => Promise.resolve() };
  return { leg: verified, companion: check(signed.payer, signed.payload.authorization.nonce, signed.amount), refusal: async () => void (await ledgerChecked(lane, ctx, [signed])) };
}

/**
 * Both legs of a purchase: signatures, then one ledger read (none when `known` holds both legs'
 * states, read with the claim). `decoded`: the same legs as the read ahead decoded them. `payerBalance` is the ledger's balance of the payer when one
 * address signed both legs (the purchase checks it covers the total).
 */
export async function verifyUsdcLegs(lane: UsdcLane, ctx: PurchaseContext, raw: { seller: unknown; fee: unknown }, known?: KnownStates, decoded?: DecodedLegs): Promise<{ seller: VerifiedLeg; fee: VerifiedLeg; payerBalance?: bigint | undefined }> {
  const seller = await signedLeg(lane, ctx, 'seller', raw.seller, decoded?.seller);
  let fee: SignedLeg;
  try {
    fee = await signedLeg(lane, ctx, 'fee', raw.fee, decoded?.fee);
  } catch (err) {
    // One leg after the other: the seller leg's ledger refusal comes before the fee's signature's.
    await ledgerChecked(lane, ctx, [seller], known);
    throw err;
  }
  const [s, f] = await ledgerChecked(lane, ctx, [seller, fee], known);
  return { seller: s!.leg, fee: f!.leg, payerBalance: s!.leg.payer === f!.leg.payer ? s!.balance : undefined };
}
