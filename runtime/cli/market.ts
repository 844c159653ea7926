/**
 * `anmpay market register|search|quote|buy|execute` against the marketplace on ANMPAY_MARKET_URL
 * (DESIGN §5, §6). `register` signs the listing with the seller's keys; `buy` quotes, signs
 * both legs and purchases, and prints the seller leg as the header to call the seller with;
 * `execute` has the marketplace make the seller call (market-execute.ts).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { addressFromPublicKey, NETWORKS } from '../../machines/chain/index.ts';
import { parseAtomicDecimal, type MarketAsset } from '../../machines/money/market.ts';
import { readWalletFile } from '../chain/codec/keys.ts';
import { signListing, type ListingKeys } from '../market/client/listing-signer.ts';
import { intArg, list, parse, positionals, str, usageError, type ParsedArgs } from './args.ts';
import { expectShape, marketUrl, serviceJson } from './env.ts';
import { readEvmKeyFile } from './evm-key-file.ts';
import { usageOf } from './help.ts';
import { executeQuote, parseBody } from './market-execute.ts';
import { legsFor, type BuyerSigner } from './market-legs.ts';
import { CliError, type CommandResult } from './output.ts';
import { operatorToken } from './ops-client.ts';
import { groupMain } from './subcommands.ts';

const USAGE = { register: usageOf('market', 'register'), search: usageOf('market', 'search'), quote: usageOf('market', 'quote'), buy: usageOf('market', 'buy'), execute: usageOf('market', 'execute'), scan: usageOf('market', 'scan') };
const S = { type: 'string' } as const;
const QUOTE_FLAGS = { resource: S, 'max-price': S, asset: S, 'max-latency-ms': S } as const;

const pricing = z.object({ asset: z.string(), seller_price: z.string(), marketplace_fee: z.string(), total_price: z.string() }).passthrough();
const listing = z.object({ resource_id: z.string(), provider_id: z.string(), name: z.string(), endpoint: z.string(), pricing, accepted_assets: z.array(pricing).optional() }).passthrough();

/** The listing's price in `asset` when it accepts that asset (a search by asset returns only those), else its primary price. */
function priceIn(r: z.infer<typeof listing>, asset: MarketAsset | undefined): z.infer<typeof pricing> {
  if (!asset) return r.pricing;
  return [r.pricing, ...(r.accepted_assets ?? [])].find((p) => p.asset === asset) ?? r.pricing;
}
const quoteDoc = z
  .object({
    intent_id: z.string(),
    resource: z.object({ resource_id: z.string(), name: z.string(), endpoint: z.string(), method: z.string() }),
    price: z.object({ seller_price: z.string(), marketplace_fee: z.string(), total_price: z.string() }).passthrough(),
    expires_at: z.number(),
    payment_requirements: z.object({ accepts: z.array(z.object({ scheme: z.string(), network: z.string(), asset: z.string(), amount: z.string(), payTo: z.string(), maxTimeoutSeconds: z.number(), extra: z.record(z.string(), z.unknown()) }).passthrough()).min(1) }).passthrough(),
  })
  .passthrough();
const purchaseDoc = z.object({ intent_id: z.string(), status: z.string(), seller_payment: z.object({ header: z.string(), value: z.string(), x402_version: z.number().optional() }).passthrough().nullable() }).passthrough();

/** Entry from the dispatcher in main.ts. */
export const main = groupMain('market', {
  register: (rest) =>
    register(parse(rest, { name: S, endpoint: S, 'usdc-price': S, 'anm-price': S, key: S, wallet: S, method: S, description: S, category: S, tag: { type: 'string', multiple: true }, docs: S }, USAGE.register)),
  search: (rest) => search(parse(rest, { 'max-price': S, asset: S, limit: S }, USAGE.search)),
  quote: (rest) => quoteCmd(parse(rest, QUOTE_FLAGS, USAGE.quote)),
  buy: (rest) => buy(parse(rest, { ...QUOTE_FLAGS, key: S, wallet: S, 'idempotency-key': S }, USAGE.buy)),
  execute: (rest) => execute(parse(rest, { ...QUOTE_FLAGS, key: S, wallet: S, body: S }, USAGE.execute)),
  scan: (rest) => scan(parse(rest, {}, USAGE.scan)),
});

function assetOpt(a: ParsedArgs, usage: string): MarketAsset | undefined {
  const v = str(a, 'asset');
  if (v === undefined) return undefined;
  if (v !== 'USDC' && v !== 'ANM') throw usageError(`--asset must be USDC or ANM, got ${JSON.stringify(v)}`, usage);
  return v;
}

function price(asset: MarketAsset, v: string, flag: string): string {
  if (parseAtomicDecimal(asset, v) === null) throw new CliError('usage', `${flag} must be a positive ${asset} amount with at most ${asset === 'USDC' ? 6 : 9} decimal places, got ${JSON.stringify(v)}`, 2);
  return v;
}

async function register(a: ParsedArgs): Promise<CommandResult> {
  positionals(a, 0, USAGE.register);
  const name = str(a, 'name');
  const endpoint = str(a, 'endpoint');
  if (!name || !endpoint) throw usageError('--name and --endpoint are required', USAGE.register);
  const usdc = str(a, 'usdc-price');
  const anm = str(a, 'anm-price');
  if (!usdc && !anm) throw usageError('give --usdc-price, --anm-price or both', USAGE.register);
  const keys: ListingKeys = {};
  const payTo: Record<string, string> = {};
  if (usdc) {
    const file = str(a, 'key');
    if (!file) throw usageError('--key <file> is required with --usdc-price: it signs for the USDC pay_to', USAGE.register);
    keys.evm = await readEvmKeyFile(file);
    payTo.USDC = keys.evm.address;
  }
  if (anm) {
    const file = str(a, 'wallet');
    if (!file) throw usageError('--wallet <file> is required with --anm-price: it signs for the ANM pay_to', USAGE.register);
    const w = await readWalletFile(file);
    keys.anm = w;
    // The marketplace's ANM lane is native:1, the live chain: the key's live address is paid.
    payTo.ANM = addressFromPublicKey(w.publicKey, NETWORKS.live.hrp);
  }
  const [primary, also] = [usdc ? { asset: 'USDC' as const, seller_price: price('USDC', usdc, '--usdc-price') } : undefined, anm ? { asset: 'ANM' as const, seller_price: price('ANM', anm, '--anm-price') } : undefined].filter((x) => x !== undefined);
  const fields: Record<string, unknown> = {
    name,
    endpoint,
    method: (str(a, 'method') ?? 'GET').toUpperCase(),
    description: str(a, 'description') ?? '',
    category: str(a, 'category') ?? '',
    tags: list(a, 'tag'),
    pricing: { model: 'per_call', ...primary! },
    ...(also ? { accepted_assets: [also] } : {}),
    pay_to: payTo,
    ...(str(a, 'docs') ? { documentation_url: str(a, 'docs') } : {}),
  };
  const body = await signListing(fields, keys);
  const r = expectShape(listing, await serviceJson('POST', `${marketUrl()}/api/v1/resources`, {}, body), 'market register');
  const text = [`listed ${r.resource_id} "${r.name}" (provider ${r.provider_id})`, `  ${r.endpoint}`, `  buyer pays ${r.pricing.total_price} ${r.pricing.asset} (seller ${r.pricing.seller_price} + fee ${r.pricing.marketplace_fee})`].join('\n');
  return { data: r, text, quiet: r.resource_id };
}

async function search(a: ParsedArgs): Promise<CommandResult> {
  const q = new URLSearchParams();
  if (a.positionals.length) q.set('capability', a.positionals.join(' '));
  const asset = assetOpt(a, USAGE.search);
  if (asset) q.set('asset', asset);
  const max = str(a, 'max-price');
  if (max) q.set('max_price', max);
  const limit = str(a, 'limit');
  if (limit) q.set('limit', String(intArg(limit, '--limit', 1)));
  const doc = expectShape(z.object({ data: z.array(listing) }).passthrough(), await serviceJson('GET', `${marketUrl()}/api/v1/search?${q.toString()}`, {}), 'market search');
  const lines = doc.data.map((r) => {
    const p = priceIn(r, asset);
    return `${r.resource_id}  ${p.total_price} ${p.asset}  ${r.name}  ${r.endpoint}`;
  });
  return { data: doc, text: lines.length ? lines.join('\n') : 'no listing matches', quiet: doc.data.map((r) => r.resource_id).join('\n') };
}

/**
 * What to quote: the capability's best listing, or with `--resource` that listing whatever the
 * capability (ADR 0085); the positional is then optional, sent but not used to choose.
 */
function quoteTarget(a: ParsedArgs, usage: string): { capability?: string; resource_id?: string } {
  const resource = str(a, 'resource');
  const [capability] = resource === undefined || a.positionals.length > 0 ? positionals(a, 1, usage) : [];
  return { ...(capability !== undefined ? { capability } : {}), ...(resource !== undefined ? { resource_id: resource } : {}) };
}

async function requestQuote(a: ParsedArgs, target: ReturnType<typeof quoteTarget>, usage: string) {
  const latency = str(a, 'max-latency-ms');
  const asset = assetOpt(a, usage);
  // Without --asset the service quotes in USDC and reads --max-price as a value, as a search does.
  const body = {
    ...target,
    ...(asset ? { asset } : {}),
    ...(str(a, 'max-price') ? { max_price: str(a, 'max-price') } : {}),
    ...(latency ? { max_latency_ms: intArg(latency, '--max-latency-ms', 1) } : {}),
  };
  return { asset: asset ?? 'USDC', quote: expectShape(quoteDoc, await serviceJson('POST', `${marketUrl()}/api/v1/route/quote`, {}, body), 'market quote') };
}

const quoteText = (q: z.infer<typeof quoteDoc>, asset: string): string =>
  [
    `intent ${q.intent_id} for ${q.resource.resource_id} "${q.resource.name}" (${q.resource.method} ${q.resource.endpoint})`,
    `  seller ${q.price.seller_price} + fee ${q.price.marketplace_fee} = ${q.price.total_price} ${asset}, quote expires ${new Date(q.expires_at * 1000).toISOString()}`,
  ].join('\n');

async function quoteCmd(a: ParsedArgs): Promise<CommandResult> {
  const { asset, quote } = await requestQuote(a, quoteTarget(a, USAGE.quote), USAGE.quote);
  return { data: quote, text: quoteText(quote, asset), quiet: quote.intent_id };
}

async function buy(a: ParsedArgs): Promise<CommandResult> {
  const target = quoteTarget(a, USAGE.buy);
  // The signer is read before anything is quoted: a missing key file costs no intent.
  const { asset, signer } = await buyerSigner(a, USAGE.buy);
  const { quote } = await requestQuote(a, target, USAGE.buy);
  const legs = await legsFor(signer, quote.payment_requirements.accepts[0]!);
  const idempotencyKey = str(a, 'idempotency-key') ?? randomUUID();
  let doc: unknown;
  try {
    doc = await serviceJson('POST', `${marketUrl()}/api/v1/purchase`, { 'idempotency-key': idempotencyKey }, { intent_id: quote.intent_id, payment: { legs } });
  } catch (e) {
    throw explainRefusal(e, signer);
  }
  const p = expectShape(purchaseDoc, doc, 'market buy');
  const header = p.seller_payment;
  const text = [
    quoteText(quote, asset),
    `purchased: ${p.status} (idempotency-key ${idempotencyKey})`,
    // The header the seller's x402 version names (DESIGN §5 "Purchase"): -q prints its value.
    ...(header ? [`call the seller${header.x402_version ? ` (x402 v${header.x402_version})` : ''} with the header:`, `  ${header.header}: ${header.value}`] : []),
  ].join('\n');
  return { data: { ...p, idempotency_key: idempotencyKey }, text, quiet: header?.value ?? '' };
}

async function execute(a: ParsedArgs): Promise<CommandResult> {
  const target = quoteTarget(a, USAGE.execute);
  const body = parseBody(str(a, 'body'));
  const { asset, signer } = await buyerSigner(a, USAGE.execute);
  const { quote } = await requestQuote(a, target, USAGE.execute);
  let r: Awaited<ReturnType<typeof executeQuote>>;
  try {
    r = await executeQuote(signer, quote, body);
  } catch (e) {
    throw explainRefusal(e, signer);
  }
  // A served answer comes back before the fee is taken: on USDC at once, on ANM once the
  // seller's transfer is settled.
  const later = r.purchase_status !== 'EXECUTING' ? '' : asset === 'ANM' ? ' (the fee follows once the seller transfer is settled)' : ' (the fee is taken right after the answer)';
  const text = [quoteText(quote, asset), `seller answered ${r.status} (${r.headers['content-type'] ?? 'no content-type'}); purchase ${r.purchase_status}${later}`, r.body].join('\n');
  // A seller that answered an error ends the purchase SELLER_FAILED, no fee taken: its answer is printed, the exit says it failed.
  const failed = r.status >= 400 || r.purchase_status === 'SELLER_FAILED' ? new CliError('seller_failed', `the seller answered ${r.status}; purchase ${r.purchase_status}, no fee taken`) : undefined;
  return { data: r, text, quiet: r.body, ...(failed && { failed }) };
}

/** The buyer's key for the lane `--asset` names: `--key` (EVM key file) for USDC, `--wallet` (ANM wallet file) for ANM. */
async function buyerSigner(a: ParsedArgs, usage: string): Promise<{ asset: MarketAsset; signer: BuyerSigner }> {
  const asset = assetOpt(a, usage) ?? 'USDC';
  const flag = asset === 'USDC' ? 'key' : 'wallet';
  const file = str(a, flag);
  if (!file) throw usageError(`--${flag} <file> is required with ${asset}: it signs the seller payment and the fee leg`, usage);
  return { asset, signer: asset === 'USDC' ? { asset, evm: await readEvmKeyFile(file) } : { asset, anm: await readWalletFile(file) } };
}

/** The marketplace's refusal, with what to do about it where the CLI knows. */
function explainRefusal(e: unknown, signer: BuyerSigner): unknown {
  if (!(e instanceof CliError) || !/insufficient_balance/.test(e.message)) return e;
  const hint =
    signer.asset === 'USDC'
      ? `anmpay usdc fund ${signer.evm.address} <usdc>`
      : `anmpay wallet fund ${addressFromPublicKey(signer.anm.publicKey, NETWORKS.live.hrp)} <nanm> --network live`;
  return new CliError(e.code, `${e.message}; fund the buyer with: ${hint}`);
}

const scanDoc = z
  .object({
    resource_id: z.string(),
    scan: z.object({ outcome: z.string(), status: z.number().nullable(), latency_ms: z.number().nullable(), detail: z.string() }).passthrough(),
    listing: z.object({ status: z.string(), x402_score: z.number().nullable(), score_label: z.string(), uptime_30d: z.number().nullable(), uptime_observations: z.number() }).passthrough(),
  })
  .passthrough();

/** Probes now through the marketplace's operator route; the probe is recorded like a round's. */
async function scan(a: ParsedArgs): Promise<CommandResult> {
  const [id] = positionals(a, 1, USAGE.scan);
  const token = await operatorToken();
  const r = expectShape(scanDoc, await serviceJson('POST', `${marketUrl()}/api/v1/resources/${encodeURIComponent(id!)}/scan`, { authorization: `Bearer ${token}` }), 'market scan');
  const { scan: p, listing: l } = r;
  const text = [
    `${r.resource_id}: ${p.outcome}${p.status === null ? '' : ` (HTTP ${p.status}`}${p.latency_ms === null ? '' : `, ${p.latency_ms} ms`}${p.status === null ? '' : ')'}${p.detail ? ` ${p.detail}` : ''}`,
    `  status ${l.status}; score ${l.x402_score ?? '-'} (${l.score_label}); uptime ${l.uptime_30d === null ? '-' : `${Math.round(l.uptime_30d * 1000) / 10} %`} over ${l.uptime_observations} probes`,
  ].join('\n');
  return { data: r, text, quiet: p.outcome };
}
