import type { Db } from '../../storage/db.ts';
import { assertMerchant, assertMode, type Mode } from './endpoints.ts';
import { WebhookError } from './errors.ts';

/** The delivery log as the dashboard and operators read it, and redelivery on demand. */

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'disabled';
const STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'disabled'];

export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: string;
  event_created: number;
  endpoint_id: string;
  mode: Mode;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface AttemptView {
  attempt: number;
  manual: boolean;
  url: string;
  status: number | null;
  /** Null for an attempt lost with its worker process. */
  latency_ms: number | null;
  response: string | null;
  error: string | null;
  /** Unix seconds sent as Service-Timestamp; null for an attempt lost with its worker. */
  timestamp: number | null;
  at: string;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  created: string;
  endpoint: string;
  mode: Mode;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Date | string;
  completed_at: Date | string | null;
}

const iso = (v: Date | string | null): string | null => (v === null ? null : new Date(v).toISOString());

const SELECT = `SELECT d.id, d.event_id, ev.type, ev.created, d.endpoint, d.mode, d.status, d.attempts, d.next_attempt_at,
                       d.last_status, d.last_error, d.created_at, d.completed_at
                  FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id`;

function view(r: DeliveryRow): DeliveryView {
  return {
    id: r.id,
    event_id: r.event_id,
    event_type: r.type,
    event_created: Number(r.created),
    endpoint_id: r.endpoint,
    mode: r.mode,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    last_status: r.last_status,
    last_error: r.last_error,
    created_at: iso(r.created_at)!,
    completed_at: iso(r.completed_at),
  };
}

export interface ListQuery {
  mode?: string | undefined;
  status?: string | undefined;
  event_id?: string | undefined;
  limit?: number | undefined;
  /** Delivery id to continue after (newest first). */
  starting_after?: string | undefined;
}

export async function listDeliveries(db: Db, merchant: string, query: ListQuery = {}): Promise<{ object: 'list'; has_more: boolean; data: DeliveryView[] }> {
  assertMerchant(merchant);
  const where = ['d.merchant = $1'];
  const params: Array<string | number> = [merchant];
  if (query.mode !== undefined) {
    params.push(assertMode(query.mode));
    where.push(`d.mode = $${params.length}`);
  }
  if (query.status !== undefined) {
    if (!STATUSES.includes(query.status as DeliveryStatus)) throw new WebhookError('invalid_body', `status must be one of ${STATUSES.join(', ')}`);
    params.push(query.status);
    where.push(`d.status = $${params.length}`);
  }
  if (query.event_id !== undefined) {
    params.push(query.event_id);
    where.push(`d.event_id = $${params.length}`);
  }
  if (query.starting_after !== undefined) {
    params.push(query.starting_after);
    const p = `$${params.length}`;
    where.push(`(d.created_at, d.id) < (SELECT created_at, id FROM webhook_deliveries WHERE id = ${p} AND merchant = $1)`);
  }
  const limit = query.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new WebhookError('invalid_body', 'limit must be an integer from 1 to 100');
  params.push(limit + 1);
  const { rows } = await db.query<DeliveryRow>(`${SELECT} WHERE ${where.join(' AND ')} ORDER BY d.created_at DESC, d.id DESC LIMIT $${params.length}`, params);
  return { object: 'list', has_more: rows.length > limit, data: rows.slice(0, limit).map(view) };
}

/** One delivery with every attempt, oldest first. Another merchant's id is not found (spec: 404, never 403). */
export async function getDelivery(db: Db, merchant: string, id: string): Promise<DeliveryView & { attempt_log: AttemptView[] }> {
  assertMerchant(merchant);
  const { rows } = await db.query<DeliveryRow>(`${SELECT} WHERE d.id = $1 AND d.merchant = $2`, [id, merchant]);
  const row = rows[0];
  if (!row) throw new WebhookError('not_found', 'no such delivery');
  return { ...view(row), attempt_log: await attemptsOf(db, id) };
}

export async function attemptsOf(db: Db, deliveryId: string): Promise<AttemptView[]> {
  const { rows } = await db.query<{ attempt: number; manual: boolean; url: string; status: number | null; latency_ms: number | null; response: string | null; error: string | null; signed_at: string | null; at: Date | string }>(
    `SELECT attempt, manual, url, status, latency_ms, response, error, signed_at, at FROM webhook_attempts WHERE delivery = $1 ORDER BY id`,
    [deliveryId],
  );
  return rows.map((r) => ({
    attempt: r.attempt,
    manual: r.manual,
    url: r.url,
    status: r.status,
    latency_ms: r.latency_ms,
    response: r.response,
    error: r.error,
    timestamp: r.signed_at === null ? null : Math.floor(Number(r.signed_at) / 1000),
    at: iso(r.at)!,
  }));
}

/**
 * A new attempt of an existing delivery, now: same event, same id and body, fresh timestamp
 * and signature. Works from any status; if the attempt fails, the rest of the retry schedule
 * (if any is left) applies. Refused while the endpoint is disabled: `set` re-enables it.
 */
export async function redeliver(db: Db, merchant: string, id: string, now = Date.now()): Promise<DeliveryView & { attempt_log: AttemptView[] }> {
  assertMerchant(merchant);
  await db.tx(async (q) => {
    const { rows } = await q.query<{ status: string }>(
      `SELECT e.status FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint WHERE d.id = $1 AND d.merchant = $2 FOR UPDATE OF d`,
      [id, merchant],
    );
    const row = rows[0];
    if (!row) throw new WebhookError('not_found', 'no such delivery');
    if (row.status !== 'active') throw new WebhookError('endpoint_disabled', 'the endpoint is disabled; set its URL again to re-enable it');
    await q.query(
      // The lease is left alone: an attempt still in flight finishes before this one starts.
      `UPDATE webhook_deliveries SET status = 'pending', manual = true, next_attempt_at = $2, completed_at = NULL, updated_at = $2 WHERE id = $1`,
      [id, new Date(now)],
    );
  });
  return getDelivery(db, merchant, id);
}
