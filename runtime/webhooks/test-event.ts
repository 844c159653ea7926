/**
 * The dashboard's "send a test event": a `webhook.test` fact for the merchant's endpoint in
 * one mode, recorded with its delivery the way the intake records every fact, so it is signed,
 * retried and logged like any other. Its id follows the spec's rule (derived from merchant,
 * type and data); the data carries the time asked, so each press is a new fact.
 */
import type { Db } from '../../storage/db.ts';
import { webhookEventId } from '../engine/webhook-id.ts';
import type { Mode } from './endpoints.ts';
import { factToRow, recordWebhookFacts, type IntakeStats } from './intake.ts';

export const TEST_EVENT_TYPE = 'webhook.test';

export async function sendTestEvent(db: Db, merchant: string, mode: Mode, now = Date.now()): Promise<{ event_id: string; stats: IntakeStats }> {
  const created = Math.floor(now / 1000);
  const data = { mode, message: 'A test event sent from the dashboard.', requested_at: new Date(now).toISOString() };
  const id = webhookEventId(merchant, TEST_EVENT_TYPE, data);
  const row = factToRow({ merchant, mode, actor_id: merchant, kind: 'test', event: { id, type: TEST_EVENT_TYPE, created, data } })!;
  return { event_id: id, stats: await recordWebhookFacts(db, [row], new Date(now)) };
}
