/**
 * Purchases on the ANM lane (DESIGN §3, §5 "Legs", "Purchase"): both legs are signed ANM
 * transfers checked against the quote and the node; the fee leg must come from the same payer
 * with the nonce right after the seller leg's, so the chain itself can never include the fee
 * transfer before the seller's (a reorg that takes the seller leg off the chain takes the fee
 * leg with it). The fee transfer is submitted only once the purchase holds the seller leg as
 * settled (`required_confirmations` deep, from the indexer's signals).
 */
import { decodeSignedTx } from '../../machines/chain/index.ts';
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { VerifiedLeg } from '../../machines/purchase/events.ts';
import type { PurchaseChainEvent } from '../../machines/purchase/chain-events.ts';
import { MARKET_LANES } from '../../machines/money/market.ts';
import type { NonceToHold } from './anm-nonce-holds.ts';
import { MarketRefusal } from './errors.ts';
import { legReference, type CheckedTransfer } from './lanes/anm-leg.ts';
import type { AnmLane, AnmSettle } from './lanes/anm-lane.ts';
import { decodeLeg } from './leg-codec.ts';
import { DEFAULT_TIMEOUT_S } from './requirements.ts';

type LegName = 'seller' | 'fee';

const refuse = (leg: LegName, reason: string, message: string): never => {
  if (reason === 'invalid_exact_anm_nonce_already_used') throw new MarketRefusal('leg_replayed', `${leg} leg: ${message}`, reason);
  throw new MarketRefusal('invalid_payment', `${leg} leg: ${message}`, reason);
};

/**
 * `anyReference`: a routed execution's seller transfer is built from the seller's own 402, so
 * it carries the seller's reference (or none), not the purchase's.
 */
async function verifyOne(lane: AnmLane, ctx: PurchaseContext, leg: LegName, raw: unknown, anyReference = false): Promise<CheckedTransfer & { known: boolean }> {
  const decoded = decodeLeg(raw);
  if (!decoded) return refuse(leg, 'invalid_payload', 'not base64 JSON of an x402 payment payload');
  const expected = { scheme: MARKET_LANES.ANM.legScheme, payTo: ctx[leg].pay_to, amount: BigInt(ctx[leg].amount), reference: anyReference ? undefined : legReference(ctx.intent_id, leg) };
  // A purchase retried with the same legs after the seller submitted its leg is still answered.
  // The balance is checked once for both legs (verifyAnmLegs).
  const c = await lane.verify(decoded.accepted, decoded.payload, expected, { allowSubmitted: ctx.legs?.[leg].tx_hash !== undefined, spend: null });
  if (!c.ok) return refuse(leg, c.reason, c.message);
  return { ...c.transfer, known: c.known === true };
}

/**
 * The account nonce of each leg this process verified, so that holding it (anmNonces) does not
 * decode the ~10,000 hex digits of the transfer a second time. Keyed by the leg object itself:
 * a leg this process did not verify (or a copy of one) is decoded.
 */
const accountNonces = new WeakMap<VerifiedLeg, bigint>();

const asLeg = (t: CheckedTransfer, ctx: PurchaseContext, leg: LegName, validBefore: number): VerifiedLeg => {
  const verified: VerifiedLeg = {
    pay_to: ctx[leg].pay_to,
    amount: ctx[leg].amount,
    payer: t.payer,
    // The transfer itself is what one leg may back once: its hash (a replay is the same hash).
    nonce: t.hash,
    valid_before: validBefore * 1000,
    payload: { transaction: t.hex, ...(t.validBefore !== null && { validBefore: String(t.validBefore) }) },
    tx_hash: t.hash,
  };
  accountNonces.set(verified, t.tx.nonce);
  return verified;
};

/**
 * Both legs against the quote and the node; throws the refusal the purchase answers with.
 * `routed`: a routed execution, whose seller leg is the payment the buyer built for the seller.
 */
export async function verifyAnmLegs(lane: AnmLane, ctx: PurchaseContext, raw: { seller: unknown; fee: unknown }, routed = false): Promise<{ seller: VerifiedLeg; fee: VerifiedLeg }> {
  // Both asked of the node at once; the seller leg's refusal is the one answered when both fail.
  const [s, f] = await Promise.allSettled([verifyOne(lane, ctx, 'seller', raw.seller, routed), verifyOne(lane, ctx, 'fee', raw.fee)]);
  if (s.status === 'rejected') throw s.reason;
  if (f.status === 'rejected') throw f.reason;
  const [seller, fee] = [s.value, f.value];
  if (fee.payer !== seller.payer || fee.tx.nonce !== seller.tx.nonce + 1n) {
    refuse('fee', 'invalid_exact_anm_fee_nonce', 'the fee transfer must come from the seller leg’s payer with the next nonce');
  }
  // What the node does not have yet must still be paid for: amounts and chain fees.
  const unpaid = [seller, fee].filter((l) => !l.known);
  const spend = unpaid.reduce((sum, l) => sum + l.tx.outputs[0]!.amount + l.tx.fee, 0n);
  if (unpaid.length > 0 && (await lane.rpc.getBalance(seller.payer)) < spend) {
    refuse(unpaid[0] === seller ? 'seller' : 'fee', 'invalid_exact_anm_insufficient_balance', 'the payer balance is below the legs not yet submitted and their chain fees');
  }
  // An ANM transfer has no expiry of its own: the window is the payload's bound or the seller's timeout as quoted.
  const window = seller.validBefore ?? lane.nowS() + (ctx.seller_offer?.max_timeout_seconds ?? DEFAULT_TIMEOUT_S);
  return { seller: asLeg(seller, ctx, 'seller', window), fee: asLeg(fee, ctx, 'fee', Math.max(window, fee.validBefore ?? window)) };
}

/**
 * Both transfers' account nonces, to be held for the purchase until it ends (ADR 0043): the fee
 * transfer waits for the seller's to settle, and no other transfer the marketplace takes may
 * carry its nonce meanwhile.
 */
export function anmNonces(legs: { seller: VerifiedLeg; fee: VerifiedLeg }): NonceToHold[] {
  const of = (leg: VerifiedLeg, name: LegName): NonceToHold => ({
    payer: leg.payer,
    nonce: accountNonces.get(leg) ?? decodeSignedTx(String(leg.payload.transaction)).nonce,
    leg: name,
    hash: leg.nonce,
  });
  return [of(legs.seller, 'seller'), of(legs.fee, 'fee')];
}

/** Submits the fee transfer; only called once the purchase holds the seller leg as settled. */
export function submitAnmFee(lane: AnmLane, fee: VerifiedLeg | undefined): Promise<AnmSettle> {
  if (!fee?.tx_hash || typeof fee.payload.transaction !== 'string') return Promise.resolve({ ok: false, reason: 'invalid_payload', message: 'the fee leg holds no transfer' });
  return lane.settle({ hash: fee.tx_hash, hex: fee.payload.transaction });
}

/**
 * Chain signals that reached the purchase while it was still QUOTED were ignored (it did not
 * know its legs' hashes yet): a buyer who submits a leg between its check and the commit of
 * `purchase.verify`. Right after the commit, a leg the node already has in a block is told to
 * the purchase as the node states it now, without a position; the purchase takes such a
 * statement only for a leg it has heard nothing positional about (chain-legs.ts).
 */
export async function catchUpAnmLegs(lane: AnmLane, ctx: PurchaseContext, at: number): Promise<PurchaseChainEvent[]> {
  // Both legs asked at once. Each leg's statement stands alone (chain-legs.ts keeps a head
  // per leg), so the order they are told in does not matter; leg order keeps it the same every time.
  const found = await Promise.all(
    (['seller', 'fee'] as const).map(async (leg): Promise<PurchaseChainEvent | null> => {
      const hash = ctx.legs?.[leg].tx_hash;
      const e = hash ? await includedNow(lane, hash, at) : null;
      return e && { ...e, id: `lookup:${hash}:${e.block_hash}` };
    }),
  );
  return found.filter((e): e is PurchaseChainEvent => e !== null);
}

/** The transfer's inclusion as the node states it now (no position), or null while it is in no block. */
export async function includedNow(lane: AnmLane, hash: string, at: number): Promise<Extract<PurchaseChainEvent, { type: 'chain.tx.included' }> | null> {
  const found = await lane.rpc.getTransactionByHash(hash);
  if (found?.block_height == null || found.block_hash === null) return null;
  const [receipt, tip] = await Promise.all([lane.rpc.getTransactionReceipt(hash), lane.rpc.blockNumber()]);
  if (!receipt) return null;
  const paid = found.outputs.reduce((sum, o) => sum + o.amount, 0n);
  const head = Math.max(tip, found.block_height);
  return {
    type: 'chain.tx.included', id: `lookup:${hash}:${found.block_hash}:${head}`, at, tx_hash: hash, from: found.from, merchant_leg: paid.toString(), fee_leg: '0',
    block_height: found.block_height, block_hash: found.block_hash, receipt: receipt.status, head,
  };
}
