/**
 * The rest of an Idempotency-Key's life after `anm_gate_lease` claimed it (ADR 0005): the first
 * response, or release after a failure. Responses finishing while an earlier write is in
 * flight are written together in one statement (`anm_idempotency_done_many`), so under load a
 * create costs a fraction of this round trip; alone, it is written at once.
 */
import type { Db } from '../../storage/db.ts';
import type { Mode } from './secrets.ts';

interface Pending {
  merchant: string;
  mode: Mode;
  key: string;
  status: number;
  headers: string;
  body: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

const DONE_MANY_SQL = `SELECT anm_idempotency_done_many($1, $2, $3, $4, $5, $6)`;
/** Writes in flight at once; more responses wait and go in the next batch. */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 256;

export class IdempotencyRecords {
  private queue: Pending[] = [];
  private inFlight = 0;

  constructor(private readonly db: Db) {}

  /** Records the first response (a JSON body); resolves once it is written. */
  done(merchant: string, mode: Mode, key: string, status: number, headers: Record<string, string>, body: Buffer | string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ merchant, mode, key, status, headers: JSON.stringify(headers), body: typeof body === 'string' ? body : body.toString('utf8'), resolve, reject });
      this.flush();
    });
  }

  /** The attempt failed without a response worth replaying: let a retry run afresh. */
  async release(merchant: string, mode: Mode, key: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE merchant = $1 AND mode = $2 AND key = $3 AND state = 'in_flight'`, [merchant, mode, key]);
  }

  /** Records live 24 hours (DESIGN §4); older ones are already ignored by the claim. */
  async sweep(): Promise<number> {
    const res = await this.db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`);
    return res.rowCount;
  }

  private flush(): void {
    if (this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    const batch = this.queue.splice(0, MAX_BATCH);
    this.inFlight++;
    void this.db
      .query(DONE_MANY_SQL, [
        batch.map((p) => p.merchant),
        batch.map((p) => p.mode),
        batch.map((p) => p.key),
        batch.map((p) => p.status),
        batch.map((p) => p.headers),
        batch.map((p) => p.body),
      ])
      .then(
        () => batch.forEach((p) => p.resolve()),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      )
      .finally(() => {
        this.inFlight--;
        this.flush();
      });
  }
}
