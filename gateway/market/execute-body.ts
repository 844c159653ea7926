/**
 * The body of `POST /api/v1/route/execute` (marketplace.md "Endpoints"). Its schema is the
 * rule; a body of the plain shape every caller sends is recognised without it, because zod's
 * walk of the whole document (the fee leg, the seller's `body`) cost about as much as the rest
 * of the route's own code (ADR 0099). Anything else goes through the schema, which refuses it
 * with its own message or accepts it as before.
 */
import { z } from 'zod';
import { AppError } from '../errors.ts';

export const executeBody = z.strictObject({
  intent_id: z.string().min(1).max(100),
  // Absent, or without `legs`: a payment with no fee leg, which the execution refuses as
  // `402 fee_leg_missing` at that check's turn (marketplace.md "A proof missing its fee leg does not verify"; ADR 0084).
  // `fee_payment` may be the split scheme's whole payload: its `intent_id`, and a `seller` leg, not used
  // (the seller is paid by `seller_payment`, the header its own 402 asked for).
  fee_payment: z.strictObject({ intent_id: z.string().max(100).optional(), legs: z.strictObject({ fee: z.unknown().optional(), seller: z.unknown().optional() }).optional() }).optional(),
  seller_payment: z.string().min(1).max(16_384),
  body: z.record(z.string(), z.unknown()).optional(),
}).refine((b) => b.fee_payment?.intent_id === undefined || b.fee_payment.intent_id === b.intent_id, { path: ['fee_payment', 'intent_id'], message: 'names another intent than intent_id' });

export type ExecuteBody = z.infer<typeof executeBody>;

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** Every own key of `o` is one of `allowed` (a strict object's rule). */
function onlyKeys(o: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

const TOP = new Set(['intent_id', 'fee_payment', 'seller_payment', 'body']);
const FEE_PAYMENT = new Set(['intent_id', 'legs']);
const LEGS = new Set(['fee', 'seller']);

/**
 * The body when the schema would take it as it is, else null. Only what the schema accepts,
 * and then the same values: a property test holds it to the schema.
 */
export function plainExecuteBody(v: unknown): ExecuteBody | null {
  if (!isPlain(v) || !onlyKeys(v, TOP)) return null;
  const { intent_id: id, fee_payment: fp, seller_payment: sp, body } = v;
  if (typeof id !== 'string' || id.length < 1 || id.length > 100) return null;
  if (typeof sp !== 'string' || sp.length < 1 || sp.length > 16_384) return null;
  if ('fee_payment' in v) {
    if (!isPlain(fp) || !onlyKeys(fp, FEE_PAYMENT)) return null;
    if ('intent_id' in fp && fp.intent_id !== id) return null;
    if ('legs' in fp && (!isPlain(fp.legs) || !onlyKeys(fp.legs, LEGS))) return null;
  }
  // A record whose key is `__proto__` is rebuilt by the schema in a way that loses it: left to the schema.
  if ('body' in v && (!isPlain(body) || Object.hasOwn(body, '__proto__'))) return null;
  return v as ExecuteBody;
}

/** The body as the route takes it, or 400 `invalid_body` with the schema's reasons. */
export function executeInput(v: unknown): ExecuteBody {
  const plain = plainExecuteBody(v);
  if (plain) return plain;
  const r = executeBody.safeParse(v);
  if (!r.success) throw new AppError('invalid_body', r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  return r.data;
}
