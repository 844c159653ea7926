/**
 * How often a listing's takeover proof reaches its endpoint (ADR 0072, 0077): one probe per
 * listing in flight in this process, shared by the registrations with the same terms that arrive
 * meanwhile, and across every process on the database a cooldown after each probe in which
 * another attempt is refused with `rate_limited`. Without it one signed body sent many times, to
 * one process or to many, would make the marketplace call the endpoint as often.
 */
import type { TakeoverProof } from '../../machines/listing/events.ts';
import type { Queryable } from '../../storage/db.ts';
import { MarketRefusal } from './errors.ts';

/** After a listing's takeover probe, further attempts on it wait this long. */
export const TAKEOVER_COOLDOWN_MS = 10_000;

/**
 * Claims the listing's next probe when the last one (by any process) is a cooldown old, in one
 * statement: of two processes claiming at once, the row lock lets one through and the other
 * sees its claim. Otherwise answers how long the cooldown still runs. The database's clock
 * decides, so processes whose clocks drift still agree.
 */
const CLAIM = `
WITH claimed AS (
  INSERT INTO listing_takeover_probes (resource_id, probed_at) VALUES ($1, now())
  ON CONFLICT (resource_id) DO UPDATE SET probed_at = now()
  WHERE listing_takeover_probes.probed_at <= now() - make_interval(secs => $2::float8 / 1000)
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM claimed) AS claimed,
       (SELECT ceil(extract(epoch FROM p.probed_at - now()) * 1000 + $2::float8)::float8 FROM listing_takeover_probes p WHERE p.resource_id = $1) AS wait_ms`;
/** The cooldown runs from the end of the probe, however long it took. */
const ENDED = `UPDATE listing_takeover_probes SET probed_at = greatest(probed_at, now()) WHERE resource_id = $1`;

interface InFlight {
  terms: string;
  proof: Promise<TakeoverProof>;
  /** The first attempt's use of the proof (its takeover sent): the listing is busy until then. */
  done: Promise<unknown>;
}

export class TakeoverGate {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly db: Queryable,
    private readonly cooldownMs = TAKEOVER_COOLDOWN_MS,
  ) {}

  /**
   * `use` of a proof for `terms` on listing `id`: the probe in flight here when it was made for
   * the same terms, else a new one once this process claims it (429 with Retry-After while the
   * listing's cooldown runs). The first attempt keeps the listing busy until its `use` ends, so a
   * copy arriving while its takeover is being sent shares the proof too (and finds the takeover
   * already applied).
   */
  async run<T>(id: string, terms: string, probe: () => Promise<TakeoverProof>, use: (proof: TakeoverProof) => Promise<T>): Promise<T> {
    for (;;) {
      const running = this.inFlight.get(id);
      if (!running) break;
      if (running.terms === terms) return use(await running.proof);
      // Other terms (another key or body): wait for that attempt, then the cooldown decides.
      await running.done.catch(() => undefined);
    }
    // Registered before the claim is asked, so copies arriving meanwhile share its answer (a
    // probe, or the same 429) instead of claiming again.
    let claimed = false;
    const proof = this.claim(id).then(() => {
      claimed = true;
      return probe();
    });
    const done = proof.then(use).finally(async () => {
      this.inFlight.delete(id);
      if (claimed) await this.db.query(ENDED, [id]).catch(() => undefined);
    });
    this.inFlight.set(id, { terms, proof, done });
    return done;
  }

  private async claim(id: string): Promise<void> {
    const { rows } = await this.db.query<{ claimed: boolean; wait_ms: number | null }>(CLAIM, [id, this.cooldownMs]);
    const row = rows[0];
    if (row?.claimed) return;
    // Claimed by another process after this statement's snapshot: its cooldown has just begun.
    const wait = row?.wait_ms ?? this.cooldownMs;
    const seconds = Math.max(1, Math.ceil(wait / 1000));
    throw new MarketRefusal('rate_limited', `This listing's endpoint was probed for a takeover moments ago; retry after ${seconds} s.`, undefined, seconds);
  }
}
