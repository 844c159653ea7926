/**
 * How often a listing's takeover proof reaches its endpoint (ADR 0072, 0077): one probe per
 * listing in flight in this process, shared by the registrations with the same terms that arrive
 * meanwhile, and across every process on the database a cooldown after each probe in which
 * another attempt is refused with `rate_limited`. Without it one signed body sent many times, to
 * one process or to many, would make the marketplace call the endpoint as often. Each process
 * remembers when a listing's cooldown ends, so attempts it already knows to be refused cost no
 * database round trip or row lock.
 */
import type { TakeoverProof } from '../../machines/listing/events.ts';
import type { Queryable } from '../../storage/db.ts';
import { MarketRefusal } from './errors.ts';

/** After a listing's takeover probe, further attempts on it wait this long. */
export const TAKEOVER_COOLDOWN_MS = 10_000;

/**
 * Claims the listing's next probe when the last one (by any process) is a cooldown old, in one
 * statement: of two processes claiming at once, the row lock lets one through and the other
 * claims nothing. The database's clock decides, so processes whose clocks drift still agree.
 */
const CLAIM = `
INSERT INTO listing_takeover_probes (resource_id, probed_at) VALUES ($1, now())
ON CONFLICT (resource_id) DO UPDATE SET probed_at = now()
WHERE listing_takeover_probes.probed_at <= now() - make_interval(secs => $2::float8 / 1000)
RETURNING 1`;
/**
 * The rest of the cooldown as of now, after a refused claim, in a statement of its own: read in
 * the claim's statement it would come from the claim's snapshot, which misses a claim another
 * process committed while this one waited for the row lock (the old, expired time).
 */
const REMAINING = `SELECT ceil(extract(epoch FROM probed_at - now()) * 1000 + $2::float8)::float8 AS wait_ms FROM listing_takeover_probes WHERE resource_id = $1`;
/** The cooldown runs from the end of the probe, however long it took. */
const ENDED = `UPDATE listing_takeover_probes SET probed_at = greatest(probed_at, now()) WHERE resource_id = $1`;

interface InFlight {
  terms: string;
  proof: Promise<TakeoverProof>;
  /** The first attempt's use of the proof (its takeover sent): the listing is busy until then. */
  done: Promise<unknown>;
}

/** Above this many remembered cooldowns, the ended ones are dropped when another is added. */
const REMEMBERED_MAX = 1_024;

export class TakeoverGate {
  private readonly inFlight = new Map<string, InFlight>();
  /**
   * Per listing, when (this process's `performance.now()`) its cooldown ends, as the database
   * last answered. Never later than the database's end, so it only refuses what the claim would
   * refuse too; once it has passed, the claim decides again (another process may have probed).
   */
  private readonly coolUntil = new Map<string, number>();

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
    this.refuseWhileCooling(id);
    // Registered before the claim is asked, so copies arriving meanwhile share its answer (a
    // probe, or the same 429) instead of claiming again.
    let claimed = false;
    const proof = this.claim(id).then(() => {
      claimed = true;
      return probe();
    });
    const done = proof.then(use).finally(async () => {
      this.inFlight.delete(id);
      if (!claimed) return;
      // Taken before ENDED's now(), so this process's end is not later than the shared one.
      this.remember(id, performance.now() + this.cooldownMs);
      await this.db.query(ENDED, [id]).catch(() => undefined);
    });
    this.inFlight.set(id, { terms, proof, done });
    return done;
  }

  private async claim(id: string): Promise<void> {
    // Before the question is sent, so the end remembered is not later than the database's.
    const asked = performance.now();
    const claimed = await this.db.query(CLAIM, [id, this.cooldownMs]);
    if (claimed.rows.length > 0) return;
    // Refused: the first refusal this process learns of in a cooldown; later ones are answered locally.
    const { rows } = await this.db.query<{ wait_ms: number | null }>(REMAINING, [id, this.cooldownMs]);
    const wait = rows[0]?.wait_ms ?? null;
    // Nothing left to wait now (the cooldown ended between the two statements): a retry may
    // claim at once, so 1 s, and nothing remembered that the database would not refuse.
    if (wait === null || wait <= 0) this.refuse(0);
    this.remember(id, asked + wait);
    this.refuse(wait);
  }

  /** Refuses locally, without the database, while this process knows the listing's cooldown runs. */
  private refuseWhileCooling(id: string): void {
    const until = this.coolUntil.get(id);
    if (until === undefined) return;
    const left = until - performance.now();
    if (left > 0) this.refuse(left);
    this.coolUntil.delete(id);
  }

  private remember(id: string, until: number): void {
    const now = performance.now();
    if (this.coolUntil.size >= REMEMBERED_MAX) for (const [k, end] of this.coolUntil) if (end <= now) this.coolUntil.delete(k);
    this.coolUntil.set(id, until);
  }

  private refuse(waitMs: number): never {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw new MarketRefusal('rate_limited', `This listing's endpoint was probed for a takeover moments ago; retry after ${seconds} s.`, undefined, seconds);
  }
}
