import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { ListingAssetEntry, ListingEvent, ListingRegisterEvent } from './events.ts';
import { emptyScan, type ScanState } from './score.ts';

export interface ListingContext {
  resource_id: string;
  provider_id: string;
  name: string;
  description: string;
  category: string;
  tags: string[];
  endpoint: string;
  method: string;
  model: 'per_call';
  assets: ListingAssetEntry[];
  documentation_url: string | null;
  request_schema: Record<string, unknown> | null;
  response_schema: Record<string, unknown> | null;
  example_request: Record<string, unknown> | null;
  example_response: Record<string, unknown> | null;
  /** Unix milliseconds of the first registration. */
  created_at: number;
  updated_at: number;
  transactions: number;
  /** Intents already counted, so a redelivered settlement counts once. */
  counted: string[];
  /** The scanner's record; absent in snapshots written before the scanner (read as empty). */
  scan?: ScanState;
  /** Unix milliseconds the current key took the listing over (ADR 0072); absent: it registered it. */
  owner_since?: number;
  /**
   * How many times the listing has changed hands (ADR 0077): +1 on every takeover. Probes and
   * takeovers name the generation they were made against; absent in older snapshots (read as 0).
   */
  owner_generation?: number;
}

type Fields = Omit<ListingContext, 'created_at' | 'updated_at' | 'transactions' | 'counted' | 'scan' | 'owner_since' | 'owner_generation'>;

/** The seller-set fields of a register, update or takeover event. */
export function fieldsOf(e: Extract<ListingEvent, { type: 'listing.register' | 'listing.update' | 'listing.take_over' }>): Fields {
  return {
    resource_id: e.resource_id,
    provider_id: e.provider_id,
    name: e.name,
    description: e.description,
    category: e.category,
    tags: e.tags,
    endpoint: e.endpoint,
    method: e.method,
    model: e.model,
    assets: e.assets,
    documentation_url: e.documentation_url,
    request_schema: e.request_schema,
    response_schema: e.response_schema,
    example_request: e.example_request,
    example_response: e.example_response,
  };
}

export function initialListingContext(e: ListingRegisterEvent): ListingContext {
  return { ...fieldsOf(e), created_at: e.at, updated_at: e.at, transactions: 0, counted: [], scan: emptyScan() };
}

export function scanOf(ctx: ListingContext): ScanState {
  return ctx.scan ?? emptyScan();
}

/** Since when the current key has controlled the listing: what a takeover's proof names. */
export function ownerSince(ctx: ListingContext): number {
  return ctx.owner_since ?? ctx.created_at;
}

/** The ownership a probe or takeover proof was made against (ADR 0077); 0 until the first takeover. */
export function ownerGeneration(ctx: ListingContext): number {
  return ctx.owner_generation ?? 0;
}

/**
 * The terms a probe judges the endpoint's 402 against (endpoint, method, each asset's lane,
 * payee and price) as a digest (ADR 0088): a probe names the terms it read, and is recorded
 * only while they are still the listing's.
 */
export function termsDigest(t: Pick<ListingContext, 'endpoint' | 'method' | 'assets'>): string {
  const terms = [t.endpoint, t.method, t.assets.map((a) => [a.asset, a.pay_to, a.seller_price_atomic])];
  return bytesToHex(sha256(utf8ToBytes(JSON.stringify(terms)))).slice(0, 32);
}
