/**
 * How often a listing's takeover proof reaches its endpoint (ADR 0072): one probe per listing
 * in flight in this process, shared by the registrations with the same terms that arrive
 * meanwhile, then a cooldown in which another attempt is refused with `rate_limited`. Without
 * it one signed body sent many times would make the marketplace call the endpoint as often.
 */
import type { TakeoverProof } from '../../machines/listing/events.ts';
import { MarketRefusal } from './errors.ts';

/** After a listing's takeover probe, further attempts on it wait this long. */
export const TAKEOVER_COOLDOWN_MS = 10_000;
/** Ended cooldowns are dropped once this many listings are remembered. */
const SWEEP_AT = 1024;

interface InFlight {
  terms: string;
  proof: Promise<TakeoverProof>;
  /** The first attempt's use of the proof (its takeover sent): the listing is busy until then. */
  done: Promise<unknown>;
}

export class TakeoverGate {
  private readonly inFlight = new Map<string, InFlight>();
  /** When each listing's last probe was done with. */
  private readonly probedAt = new Map<string, number>();

  constructor(
    private readonly cooldownMs = TAKEOVER_COOLDOWN_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * `use` of a proof for `terms` on listing `id`: the probe in flight when it was made for the
   * same terms, else a new one unless the listing is in its cooldown (429 with Retry-After).
   * The first attempt keeps the listing busy until its `use` ends, so a copy arriving while its
   * takeover is being sent shares the proof too (and finds the takeover already applied).
   */
  async run<T>(id: string, terms: string, probe: () => Promise<TakeoverProof>, use: (proof: TakeoverProof) => Promise<T>): Promise<T> {
    for (;;) {
      const running = this.inFlight.get(id);
      if (!running) break;
      if (running.terms === terms) return use(await running.proof);
      // Other terms (another key or body): wait for that attempt, then the cooldown decides.
      await running.done.catch(() => undefined);
    }
    const wait = (this.probedAt.get(id) ?? -Infinity) + this.cooldownMs - this.clock();
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new MarketRefusal('rate_limited', `This listing's endpoint was probed for a takeover moments ago; retry after ${seconds} s.`, undefined, seconds);
    }
    const proof = probe();
    const done = proof.then(use).finally(() => {
      this.inFlight.delete(id);
      this.ended(id);
    });
    this.inFlight.set(id, { terms, proof, done });
    return done;
  }

  private ended(id: string): void {
    const now = this.clock();
    if (this.probedAt.size >= SWEEP_AT) {
      for (const [k, at] of this.probedAt) if (at + this.cooldownMs <= now) this.probedAt.delete(k);
    }
    this.probedAt.set(id, now);
  }
}
