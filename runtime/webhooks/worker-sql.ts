/**
 * The delivery worker's statements and rows (`worker.ts`): the claim that leases due
 * deliveries, the batched write of attempt outcomes fenced by attempt number, and the
 * endpoint disable of a 410.
 */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  endpoint: string;
  attempt: number;
  manual: boolean;
  url: string;
  endpoint_status: 'active' | 'disabled';
  body: string;
  secrets: string[] | null;
  /** The previous attempt, when its worker died before recording it (lease expired). */
  lost_attempt: number | null;
}

export interface AttemptOutcome {
  id: string;
  attempt: number;
  manual: boolean;
  url: string;
  endpoint: string;
  http_status: number | null;
  latency_ms: number | null;
  response: string | null;
  error: string | null;
  signed_at: number | null;
  status: 'pending' | 'succeeded' | 'failed' | 'disabled';
  next_at: string | null;
  gone: boolean;
}

export const CLAIM_MAX = 1000;

export const CLAIM_SQL = `
  WITH cand AS (
    SELECT d.id, d.endpoint, d.next_attempt_at, d.manual FROM webhook_deliveries d
     WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)
       AND NOT (d.endpoint = ANY($2::text[]))
     ORDER BY d.next_attempt_at LIMIT $3
     FOR UPDATE SKIP LOCKED
  ), pick AS (
    SELECT id, manual FROM (
      SELECT id, manual, endpoint, next_attempt_at, row_number() OVER (PARTITION BY endpoint ORDER BY next_attempt_at, id) AS rn FROM cand
    ) x WHERE rn <= COALESCE(($4::jsonb ->> endpoint)::int, $5)
    ORDER BY next_attempt_at LIMIT $6
  ), upd AS (
    UPDATE webhook_deliveries d SET attempts = d.attempts + 1, manual = false, lease_until = $7, updated_at = $1
      FROM pick WHERE d.id = pick.id
    RETURNING d.id, d.event_id, d.endpoint, d.attempts AS attempt, pick.manual
  )
  SELECT upd.*, ep.url, ep.status AS endpoint_status, ev.body,
         CASE WHEN upd.attempt > 1 AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery = upd.id AND a.attempt = upd.attempt - 1)
              THEN upd.attempt - 1 END AS lost_attempt,
         (SELECT array_agg(s.secret ORDER BY s.created_at DESC, s.id DESC) FROM webhook_secrets s
           WHERE s.endpoint = upd.endpoint AND (s.expires_at IS NULL OR s.expires_at > $1)) AS secrets
    FROM upd JOIN webhook_endpoints ep ON ep.id = upd.endpoint JOIN webhook_events ev ON ev.id = upd.event_id`;

export const RECORD_SQL = `
  WITH x AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, attempt int, manual boolean, url text, http_status int, latency_ms int,
      response text, error text, signed_at bigint, status text, next_at timestamptz, gone boolean, endpoint text)
  ), a AS (
    INSERT INTO webhook_attempts (delivery, attempt, manual, url, status, latency_ms, response, error, signed_at, at)
    SELECT id, attempt, manual, url, http_status, latency_ms, response, error, signed_at, $2 FROM x
  ), d AS (
    UPDATE webhook_deliveries d SET status = x.status, next_attempt_at = x.next_at, lease_until = NULL, last_status = x.http_status,
           last_error = x.error, updated_at = $2, completed_at = CASE WHEN x.status = 'pending' THEN NULL ELSE $2::timestamptz END
      FROM x WHERE d.id = x.id AND d.attempts = x.attempt AND d.status = 'pending'
    RETURNING d.id
  )
  SELECT (SELECT count(*) FROM d)::int AS n`;

// A 410 disables the endpoint and parks what is still pending for it: nothing more is sent
// until `set` re-enables it (parked deliveries can then be redelivered on demand).
export const DISABLE_SQL = `
  WITH e AS (
    UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2, updated_at = $3
     WHERE id = ANY($1::text[]) AND status = 'active' RETURNING id, merchant, mode
  )
  UPDATE webhook_deliveries d SET status = 'disabled', next_attempt_at = NULL, lease_until = NULL, updated_at = $3, completed_at = $3
    FROM e WHERE d.merchant = e.merchant AND d.mode = e.mode AND d.endpoint = e.id AND d.status = 'pending'`;
