/**
 * Listings of the marketplace (DESIGN §5 "Listings"): registration checks the seller's
 * signatures and sends the listing actor its event; reads return the records the actors
 * hold. Nothing here edits a listing row by hand.
 */
import { isDeepStrictEqual } from 'node:util';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { ownerGeneration, ownerSince, type ListingContext } from '../../machines/listing/context.ts';
import type { ListingEvent, ListingRegisterEvent, TakeoverProof } from '../../machines/listing/events.ts';
import { listingRecord, type ListingRecord, type ListingStatus } from '../../machines/listing/view.ts';
import { DEFAULT_LANE_NETWORKS, type LaneNetworks } from '../../machines/money/market.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db } from '../../storage/db.ts';
import type { ActorHost } from '../engine/actor-host.ts';
import type { ActorTarget, ApplyResult } from '../engine/actor-types.ts';
import { boundedJsonSize } from '../storable-json.ts';
import { MarketRefusal } from './errors.ts';
import { listingBody, pricedAssets } from './listing-input.ts';
import { listingMessage, providerIdOf, resourceIdOf, verifyListingSignatures } from './listing-signature.ts';
import { notProven, proveControl, type ControlProbe } from './listing-takeover.ts';
import { TakeoverGate, TAKEOVER_COOLDOWN_MS } from './takeover-gate.ts';

export const LISTING_KIND = 'listing';
/** A new listing's first probe comes within this (random) wait, so a batch of registrations is not probed at once. */
export const FIRST_PROBE_MAX_MS = 30_000;
/** A listing's schemas and examples may nest this deep; its body is at most the gateway's 256 KiB. */
const LISTING_DEPTH = 64;
const LISTING_BYTES = 256 * 1024;

/** The seller-set fields every registration event carries. */
type ListingFields = Omit<ListingRegisterEvent, 'type' | 'id' | 'at' | 'probe_in_ms'>;

interface Row {
  id: string;
  state: string;
  snapshot: PersistedSnapshot;
}

export function recordOf(row: Row, networks: LaneNetworks = DEFAULT_LANE_NETWORKS): ListingRecord {
  return listingRecord(row.snapshot.context as ListingContext, row.state as ListingStatus, networks);
}

export interface Registered {
  record: ListingRecord;
  created: boolean;
}

export class Listings {
  constructor(
    private readonly db: Db,
    private readonly host: ActorHost,
    private readonly clock: () => number = Date.now,
    /** Each lane's network as configured: records name it in `pricing`. */
    private readonly networks: LaneNetworks = DEFAULT_LANE_NETWORKS,
    private readonly firstProbeMaxMs = FIRST_PROBE_MAX_MS,
    /** How a takeover's proof reaches the endpoint: the scanner's and routed execution's rules. */
    private readonly control: ControlProbe = { forward: { allowPrivate: false } },
    /** After a takeover probe, the listing's next attempt, by any process, waits this long (ADR 0072, 0077). */
    takeoverCooldownMs = TAKEOVER_COOLDOWN_MS,
  ) {
    this.gate = new TakeoverGate(db, takeoverCooldownMs);
  }

  private readonly gate: TakeoverGate;

  private readonly recordOf = (row: Row): ListingRecord => recordOf(row, this.networks);

  /** Registers or (same key) updates a listing from a seller's signed body. */
  async register(raw: unknown): Promise<Registered> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new MarketRefusal('invalid_body', 'the body must be a JSON object');
    // A signature holds over any text: what PostgreSQL cannot store is refused here, not by the write.
    if (boundedJsonSize(raw, LISTING_BYTES, LISTING_DEPTH) === null) {
      throw new MarketRefusal('invalid_body', `the listing holds a string PostgreSQL cannot store (NUL or a lone surrogate) or nests deeper than ${LISTING_DEPTH}`);
    }
    const parsed = listingBody.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new MarketRefusal('invalid_body', issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid listing');
    }
    const body = parsed.data;
    const assets = pricedAssets(body);
    const key = await verifyListingSignatures(raw as Record<string, unknown>, body, assets.map((a) => a.asset));
    const resourceId = resourceIdOf(body.method, body.endpoint);
    const fields: ListingFields = {
      resource_id: resourceId,
      provider_id: providerIdOf(key),
      name: body.name,
      description: body.description,
      category: body.category,
      tags: body.tags,
      endpoint: body.endpoint,
      method: body.method,
      model: body.pricing.model,
      assets: assets.map((a) => ({ asset: a.asset, pay_to: body.pay_to[a.asset] ?? '', seller_price_atomic: a.seller.toString() })),
      documentation_url: body.documentation_url,
      request_schema: body.request_schema,
      response_schema: body.response_schema,
      example_request: body.example_request,
      example_response: body.example_response,
    };
    // The same signed body sent twice is one event: its id is the hash of what was signed.
    const digest = bytesToHex(sha256(utf8ToBytes(listingMessage(raw as Record<string, unknown>)))).slice(0, 32);
    const target = { kind: LISTING_KIND, id: resourceId };
    const at = this.clock();
    const probeIn = Math.floor(Math.random() * this.firstProbeMaxMs);
    const first = await this.host.apply(target, { type: 'listing.register', id: `register:${digest}`, at, probe_in_ms: probeIn, ...fields } satisfies ListingEvent);
    if (first.outcome === 'applied') return { record: this.recordOf({ id: resourceId, ...first, state: first.status }), created: true };
    // The same first registration again answers the listing as it is, unless it changed hands since (ADR 0072).
    const owner = (first.snapshot.context as ListingContext).provider_id;
    if (first.outcome === 'duplicate' && owner === fields.provider_id) return { record: this.recordOf({ id: resourceId, ...first, state: first.status }), created: false };
    // The listing exists: its owner updates it, another key takes it over with proof. One more
    // round when it changed hands meanwhile (the event was checked against what was read).
    let seen: ApplyResult = first;
    // The second round, after a takeover made against an ownership that ended meanwhile, reuses the first's proof.
    let proof: TakeoverProof | undefined;
    for (let round = 0; round < 2; round++) {
      const ctx = seen.snapshot.context as ListingContext;
      // The owner's terms as they are (a takeover sent again, an update repeated) change nothing: no event, status kept.
      if (ctx.provider_id === fields.provider_id && sameTerms(ctx, fields)) return { record: this.recordOf({ id: resourceId, ...seen, state: seen.status }), created: false };
      if (ctx.provider_id === fields.provider_id) {
        seen = await this.host.apply(target, { type: 'listing.update', id: `update:${digest}`, at, ...fields } satisfies ListingEvent);
      } else {
        const use = async (p: TakeoverProof) => ({ p, result: await this.takeOver(target, fields, ctx, digest, p) });
        const made = proof ? await use(proof) : await this.gate.run(resourceId, JSON.stringify(fields), () => this.prove(fields), use);
        proof = made.p;
        seen = made.result;
      }
      if (seen.outcome !== 'ignored') return { record: this.recordOf({ id: resourceId, ...seen, state: seen.status }), created: false };
    }
    throw new MarketRefusal('forbidden', 'This listing changed hands while it was being registered; send the registration again.');
  }

  private prove(fields: ListingFields): Promise<TakeoverProof> {
    return proveControl({ endpoint: fields.endpoint, method: fields.method, assets: fields.assets }, this.control, this.clock);
  }

  /** When the probe's 402 names the new payTo on every lane, sends the takeover (ADR 0072). */
  private async takeOver(target: ActorTarget, fields: ListingFields, owner: ListingContext, digest: string, proof: TakeoverProof): Promise<ApplyResult> {
    const refused = notProven(fields.assets, proof);
    if (refused) throw new MarketRefusal('forbidden', refused);
    const generation = ownerGeneration(owner);
    // The same signed body against the same ownership is one event; against a later one, another.
    // The owner's start still travels for a process of the release before ADR 0077 during a rolling deploy.
    const event = {
      type: 'listing.take_over', id: `take-over:${digest}:g${generation}`, at: this.clock(), ...fields,
      previous_provider_id: owner.provider_id, previous_owner_since: ownerSince(owner), previous_owner_generation: generation, proof,
    } satisfies ListingEvent;
    return this.host.apply(target, event);
  }

  async byId(id: string): Promise<ListingRecord | null> {
    const { rows } = await this.db.query<Row>(`SELECT id, state, snapshot FROM actors WHERE id = $1 AND kind = $2`, [id, LISTING_KIND]);
    const row = rows[0];
    return row ? this.recordOf(row) : null;
  }

  /** Oldest first by resource id, `limit + 1` rows read so the caller can tell `has_more`. */
  async page(limit: number, after?: string): Promise<{ records: ListingRecord[]; hasMore: boolean }> {
    const params = after ? [LISTING_KIND, limit + 1, after] : [LISTING_KIND, limit + 1];
    const { rows } = await this.db.query<Row>(
      `SELECT id, state, snapshot FROM actors WHERE kind = $1 ${after ? 'AND id > $3' : ''} ORDER BY id LIMIT $2`,
      params,
    );
    return { records: rows.slice(0, limit).map(this.recordOf), hasMore: rows.length > limit };
  }

  /** Listings changed after `since` (the search index's catch-up), with the newest change time. */
  async changedSince(since: Date | null): Promise<{ records: ListingRecord[]; newest: Date | null }> {
    const { rows } = await this.db.query<Row & { updated_at: Date }>(
      `SELECT id, state, snapshot, updated_at FROM actors WHERE kind = $1 AND ($2::timestamptz IS NULL OR updated_at >= $2) ORDER BY updated_at`,
      [LISTING_KIND, since],
    );
    return { records: rows.map(this.recordOf), newest: rows.at(-1)?.updated_at ?? since };
  }
}

/** Whether the listing already holds every field the registration sets (its terms, payTo and prices). */
function sameTerms(ctx: ListingContext, fields: ListingFields): boolean {
  return (Object.keys(fields) as Array<keyof ListingFields>).every((k) => isDeepStrictEqual(ctx[k] ?? null, fields[k] ?? null));
}
