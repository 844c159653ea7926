/**
 * What the operator console reads about actors: the list (filters, keyset pages), one actor's
 * row, its journal in pages, its timers and outbox rows. Reads only; every page is one
 * indexed range scan, so a 10,000-entry journal costs the same as a short one.
 */
import type { Db, SqlParam } from '../../storage/db.ts';
import type { ActorRow, ActorSummary, JournalEntry, OutboxRow, Page, TimerRow } from '../../machines/kit/console-view.ts';

export interface ActorFilter {
  kind?: string | undefined;
  state?: string | undefined;
  merchant?: string | undefined;
  /** Ids that start with this text. */
  idPrefix?: string | undefined;
  /** The last id of the previous page: pages go by id, ascending. */
  after?: string | undefined;
  limit: number;
}

const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));

/** LIKE pattern that matches `prefix` literally. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export class ActorReads {
  constructor(private readonly db: Db) {}

  async list(f: ActorFilter): Promise<Page<ActorSummary>> {
    const params: SqlParam[] = [];
    const where: string[] = [];
    if (f.kind) where.push(`kind = $${params.push(f.kind)}`);
    if (f.state) where.push(`state = $${params.push(f.state)}`);
    if (f.merchant) where.push(`merchant = $${params.push(f.merchant)}`);
    if (f.idPrefix) where.push(`id LIKE $${params.push(likePrefix(f.idPrefix))}`);
    if (f.after) where.push(`id > $${params.push(f.after)}`);
    const { rows } = await this.db.query<ActorSummary>(
      `SELECT id, kind, state, merchant, mode, version, updated_at FROM actors
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT $${params.push(f.limit + 1)}`,
      params,
    );
    const more = rows.length > f.limit;
    const page = rows.slice(0, f.limit).map((r) => ({ ...r, updated_at: iso(r.updated_at) }));
    return { rows: page, next: more ? (page.at(-1)?.id ?? null) : null };
  }

  async get(id: string): Promise<ActorRow | null> {
    const { rows } = await this.db.query<ActorRow>(
      `SELECT id, kind, state, merchant, mode, version, machine, machine_version, snapshot, created_at, updated_at FROM actors WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    return r ? { ...r, created_at: iso(r.created_at), updated_at: iso(r.updated_at) } : null;
  }

  /** Newest first; `before` is the seq the previous page ended at. */
  async journal(actorId: string, opts: { before?: number | undefined; limit: number }): Promise<Page<JournalEntry>> {
    const params: SqlParam[] = [actorId, opts.limit + 1];
    const { rows } = await this.db.query<{ seq: number; event_id: string; event: Record<string, unknown>; state_before: string | null; state_after: string; at: unknown }>(
      `SELECT seq, event_id, event, state_before, state_after, at FROM actor_events
        WHERE actor_id = $1 ${opts.before !== undefined ? `AND seq < $${params.push(opts.before)}` : ''}
        ORDER BY seq DESC LIMIT $2`,
      params,
    );
    const more = rows.length > opts.limit;
    const page = rows.slice(0, opts.limit);
    const seqs = page.map((r) => r.seq);
    const [outbox, timers] = seqs.length
      ? await Promise.all([this.outboxBySeq(actorId, seqs), this.timersBySeq(actorId, seqs)])
      : [new Map<number, JournalEntry['outbox']>(), new Map<number, JournalEntry['timers']>()];
    const entries = page.map(
      (r): JournalEntry => ({
        seq: r.seq,
        event_id: r.event_id,
        type: typeof r.event.type === 'string' ? r.event.type : '?',
        event: r.event,
        state_before: r.state_before,
        state_after: r.state_after,
        at: iso(r.at),
        outbox: outbox.get(r.seq) ?? [],
        timers: timers.get(r.seq) ?? [],
      }),
    );
    return { rows: entries, next: more ? String(page.at(-1)?.seq ?? '') : null };
  }

  /** Webhook rows carry `<actor>:<seq>:<n>` as their message id (runtime/engine/effect-plan.ts). */
  private async outboxBySeq(actorId: string, seqs: number[]): Promise<Map<number, JournalEntry['outbox']>> {
    const { rows } = await this.db.query<{ msg_id: string; subject: string; published_at: unknown }>(
      `SELECT msg_id, subject, published_at FROM outbox WHERE actor_id = $1 AND msg_id LIKE $2 ORDER BY id`,
      [actorId, likePrefix(`${actorId}:`)],
    );
    const out = new Map<number, JournalEntry['outbox']>();
    const want = new Set(seqs);
    for (const r of rows) {
      const seq = Number(r.msg_id.slice(actorId.length + 1).split(':')[0]);
      if (!want.has(seq)) continue;
      const list = out.get(seq) ?? [];
      list.push({ msg_id: r.msg_id, subject: r.subject, published_at: isoOrNull(r.published_at) });
      out.set(seq, list);
    }
    return out;
  }

  private async timersBySeq(actorId: string, seqs: number[]): Promise<Map<number, JournalEntry['timers']>> {
    const { rows } = await this.db.query<{ name: string; fire_at: unknown; generation: number }>(
      `SELECT name, fire_at, generation FROM timers WHERE actor_id = $1 AND generation = ANY($2::int[])`,
      [actorId, seqs],
    );
    const out = new Map<number, JournalEntry['timers']>();
    for (const r of rows) out.set(r.generation, [...(out.get(r.generation) ?? []), { name: r.name, fire_at: iso(r.fire_at) }]);
    return out;
  }

  async timers(actorId: string): Promise<TimerRow[]> {
    const { rows } = await this.db.query<TimerRow>(`SELECT name, event_type, fire_at, generation, fired_at FROM timers WHERE actor_id = $1 ORDER BY fire_at`, [actorId]);
    return rows.map((r) => ({ ...r, fire_at: iso(r.fire_at), fired_at: isoOrNull(r.fired_at) }));
  }

  /** The newest outbox rows of the actor (published ones are kept for a retention window). */
  async outbox(actorId: string, limit = 50): Promise<OutboxRow[]> {
    const { rows } = await this.db.query<OutboxRow>(
      `SELECT id::text AS id, msg_id, subject, payload, created_at, published_at FROM outbox WHERE actor_id = $1 ORDER BY id DESC LIMIT $2`,
      [actorId, limit],
    );
    return rows.map((r) => ({ ...r, created_at: iso(r.created_at), published_at: isoOrNull(r.published_at) }));
  }

  /** The whole journal's events in order, for replay. */
  async events(actorId: string): Promise<Array<{ seq: number; event: Record<string, unknown> }>> {
    const { rows } = await this.db.query<{ seq: number; event: Record<string, unknown> }>(`SELECT seq, event FROM actor_events WHERE actor_id = $1 ORDER BY seq`, [actorId]);
    return rows;
  }
}
