/**
 * A create whose Idempotency-Key is optional (refunds, invoices): with a claimed key, the
 * response is recorded under it once the command answers; a refusal or a failure releases the
 * key, so a retry with it runs afresh.
 */
import type { FastifyReply } from 'fastify';
import type { GateKey, IdempotencyRecords } from '../../runtime/merchant/gate.ts';
import type { Admitted } from './admission.ts';
import { JSON_TYPE } from './reply.ts';

export async function sendKeyedCreate<B>(
  records: Pick<IdempotencyRecords, 'done' | 'release'>,
  reply: FastifyReply,
  a: Admitted<B>,
  run: (key: GateKey, body: B, idem: string | null) => Promise<{ status: number; body: unknown }>,
): Promise<FastifyReply> {
  const key = a.key!;
  const claim = a.claim;
  try {
    const res = await run(key, a.body, claim?.key ?? null);
    const text = JSON.stringify(res.body);
    if (claim) await records.done(key.merchant, key.mode, claim.key, res.status, { 'content-type': JSON_TYPE }, text);
    return reply.code(res.status).type(JSON_TYPE).send(text);
  } catch (err) {
    if (claim) await records.release(key.merchant, key.mode, claim.key).catch(() => undefined);
    throw err;
  }
}
