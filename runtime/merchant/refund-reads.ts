/** Reads for the refund routes: the merchant's own actors only (another merchant's id is absent). */
import type { Db } from '../../storage/db.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Mode } from './secrets.ts';

export interface ActorRead {
  state: string;
  /** The actor's version: a stream that read this resumes after it. */
  version: number;
  snapshot: PersistedSnapshot;
}

export class RefundReads {
  constructor(private readonly db: Db) {}

  async own(kind: 'payment_intent' | 'refund', id: string, merchant: string, mode: Mode): Promise<ActorRead | null> {
    const { rows } = await this.db.query<ActorRead>(
      `SELECT state, version, snapshot FROM actors WHERE id = $1 AND kind = $2 AND merchant = $3 AND mode = $4`,
      [id, kind, merchant, mode],
    );
    return rows[0] ?? null;
  }
}
