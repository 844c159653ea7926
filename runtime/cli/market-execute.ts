/**
 * `anmpay market execute`: the whole routed-execution buyer flow (DESIGN §5 "Routed
 * execution"). The seller's own header is built from the seller's 402 (v2 `PAYMENT-REQUIRED`
 * header or a v1 JSON body) with `@x402/core`'s x402Client: on USDC the stock `@x402/evm`
 * scheme, the fee leg with `ExactSplitEvmScheme`; on ANM the project's `ExactAnmScheme`, the
 * fee leg with `ExactAnmSplitScheme` at the nonce after the seller transfer's. Only an offer
 * that pays the quote's seller leg exactly is signed (ADR 0087). The marketplace makes the call.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import type { PaymentRequired } from '@x402/core/types';
import { z } from 'zod';
import { formatAtomic, MARKET_LANES, type MarketAsset } from '../../machines/money/market.ts';
import type { AnmWallet } from '../market/client/anm-wallet.ts';
import { ExactAnmScheme } from '../market/client/exact-anm.ts';
import { fromV1Network } from '../market/requirements.ts';
import { expectShape, marketUrl, serviceJson } from './env.ts';
import { legsFor, liveWallet, type BuyerSigner } from './market-legs.ts';
import { CliError } from './output.ts';

const SELLER_TIMEOUT_MS = 30_000;

export const executionDoc = z
  .object({ intent_id: z.string(), purchase_status: z.string(), status: z.number(), headers: z.record(z.string(), z.string()), body: z.string(), body_encoding: z.enum(['utf8', 'base64']) })
  .passthrough();

interface QuoteLike {
  intent_id: string;
  resource: { endpoint: string; method: string };
  payment_requirements: { accepts: Array<{ scheme: string; network: string; asset: string; amount: string; payTo: string; maxTimeoutSeconds: number; extra: Record<string, unknown> }> };
}

/** The quote's seller leg: the one offer of the seller's 402 the buyer may sign. */
interface SellerTerms {
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
}

function sellerTerms(asset: MarketAsset, quote: QuoteLike): SellerTerms {
  const a = quote.payment_requirements.accepts[0]!;
  const leg = (a.extra.legs as { seller?: { payTo?: unknown; amount?: unknown } } | undefined)?.seller;
  if (typeof leg?.payTo !== 'string' || typeof leg.amount !== 'string') throw new CliError('bad_response', 'the quote names no seller leg (payment_requirements.accepts[0].extra.legs.seller)');
  return { scheme: MARKET_LANES[asset].legScheme, network: a.network, asset: a.asset, payTo: leg.payTo, amount: leg.amount };
}

type Offer = Record<string, unknown>;
const sameId = (x: unknown, y: string) => typeof x === 'string' && (y.startsWith('0x') ? x.toLowerCase() === y.toLowerCase() : x === y);
/** x402 v1 names the amount `maxAmountRequired` and the network by name (`base`). */
const amountOf = (o: Offer): unknown => o.amount ?? o.maxAmountRequired;
const onLane = (o: Offer, t: SellerTerms) => o.scheme === t.scheme && fromV1Network(o.network) === t.network && sameId(o.asset, t.asset);
const offersLeg = (o: Offer, t: SellerTerms) => onLane(o, t) && sameId(o.payTo, t.payTo) && amountOf(o) === t.amount;

/**
 * The seller's offers that pay the quote's seller leg exactly. The quote's total is the
 * buyer's max_price guarantee (marketplace.md "Fee rule"): an offer asking more, or paying
 * someone else, is refused before anything is signed.
 */
function quotedOffers(asset: MarketAsset, required: PaymentRequired, t: SellerTerms): PaymentRequired {
  const offers = (Array.isArray(required.accepts) ? required.accepts : []) as Offer[];
  const ok = offers.filter((o) => offersLeg(o, t));
  if (ok.length > 0) return { ...required, accepts: ok as PaymentRequired['accepts'] };
  const near = offers.find((o) => onLane(o, t)) ?? offers[0];
  const asked = near ? payment(asset, amountOf(near), near.payTo, near.network) : 'nothing this CLI can pay';
  throw new CliError('seller_price_mismatch', `the seller's 402 asks ${asked}, but the quote's seller leg is ${payment(asset, t.amount, t.payTo, t.network)}: nothing signed`);
}

/** "900000 (0.9 USDC) to 0x… on eip155:8453": atomic units, and the decimal when it is a number. */
function payment(asset: MarketAsset, amount: unknown, payTo: unknown, network: unknown): string {
  const n = typeof amount === 'string' && /^[0-9]{1,78}$/.test(amount) ? ` (${formatAtomic(asset, BigInt(amount))} ${asset})` : '';
  return `${String(amount)}${n} to ${String(payTo)} on ${String(network)}`;
}

/** The seller's 402 to an unpaid call, paid by the buyer's key with an x402Client, if it asks for the quote's seller leg. */
async function sellerPayment(client: x402Client, asset: BuyerSigner['asset'], terms: SellerTerms, endpoint: string, method: string, body: Record<string, unknown>): Promise<string> {
  const withBody = method !== 'GET' && method !== 'HEAD';
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method,
      redirect: 'manual',
      signal: AbortSignal.timeout(SELLER_TIMEOUT_MS),
      ...(withBody ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
  } catch (e) {
    throw new CliError('seller_unreachable', `cannot reach the seller at ${endpoint} for its payment requirements: ${(e as Error).message}`);
  }
  if (res.status !== 402) throw new CliError('seller_not_x402', `the seller answered ${res.status} to an unpaid ${method} ${endpoint}, not 402 Payment Required`);
  const v2 = res.headers.get('payment-required');
  let required: PaymentRequired;
  try {
    required = v2 ? decodePaymentRequiredHeader(v2) : ((await res.json()) as PaymentRequired);
  } catch {
    throw new CliError('seller_not_x402', 'the seller\'s 402 carries neither a PAYMENT-REQUIRED header (x402 v2) nor a JSON body (x402 v1)');
  }
  const quoted = quotedOffers(asset, required, terms);
  // The stock client's own limits (its chains' default tokens only, at most $1 a payment) are not
  // the buyer's: the quote is (its total under --max-price), and only offers paying exactly its seller leg are left.
  client.setSpendControls({ allowedAssets: quoted.accepts.map((o) => ({ network: o.network, asset: o.asset, maxAmountPerPayment: terms.amount })) });
  try {
    return encodePaymentSignatureHeader(await client.createPaymentPayload(quoted));
  } catch (e) {
    throw new CliError('seller_not_x402', `cannot pay the seller's 402 with ${asset} (${asset === 'ANM' ? 'exact-anm on native:1' : 'an EVM exact scheme'}): ${(e as Error).message}`);
  }
}

/**
 * The x402Client that pays the seller. ANM: one nonce reading for both transfers, the seller's
 * at n and the fee at n + 1, so the chain can only include the fee after the seller transfer.
 */
async function buyerClient(buyer: BuyerSigner): Promise<{ client: x402Client; wallet?: AnmWallet }> {
  if (buyer.asset === 'USDC') return { client: registerExactEvmScheme(new x402Client(), { signer: buyer.evm }) };
  const wallet = liveWallet(buyer.anm, await liveWallet(buyer.anm).nextNonce());
  return { client: new x402Client().register(MARKET_LANES.ANM.network, new ExactAnmScheme(wallet)), wallet };
}

export async function executeQuote(buyer: BuyerSigner, quote: QuoteLike, body: Record<string, unknown>) {
  const method = quote.resource.method.toUpperCase();
  const terms = sellerTerms(buyer.asset, quote);
  const { client, wallet } = await buyerClient(buyer);
  const seller_payment = await sellerPayment(client, buyer.asset, terms, quote.resource.endpoint, method, body);
  const { fee } = await legsFor(buyer, quote.payment_requirements.accepts[0]!, wallet);
  const doc = await serviceJson('POST', `${marketUrl()}/api/v1/route/execute`, {}, { intent_id: quote.intent_id, fee_payment: { legs: { fee } }, seller_payment, body });
  return expectShape(executionDoc, doc, 'market execute');
}

/** `--body`: a JSON object. */
export function parseBody(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new CliError('usage', '--body must be a JSON object, e.g. --body \'{"city":"Lisbon"}\'', 2);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CliError('usage', '--body must be a JSON object', 2);
  return v as Record<string, unknown>;
}
