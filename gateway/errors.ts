/**
 * The one error-code table of the HTTP interface (spec "Errors"). Every code the gateway can
 * return is here exactly once; `docs/errors.md` lists the same codes and a test keeps the two
 * in step. Responses use the spec envelope; 5xx bodies are generic and carry no details.
 */
import { MarketRefusal } from '../runtime/market/errors.ts';
import { RuntimeError, TerminalError } from '../runtime/errors.ts';
import type { errorCodes } from 'fastify';

export type ErrorType = 'invalid_request' | 'api_error';

export interface ErrorSpec {
  status: number;
  message: string;
}

export const ERRORS = {
  invalid_json: { status: 400, message: 'The request body must be strict JSON sent as application/json in UTF-8, with no key named twice.' },
  invalid_body: { status: 400, message: 'The request body is not a valid request for this endpoint.' },
  bad_request: { status: 400, message: 'The request parameters are malformed.' },
  idempotency_key_required: { status: 400, message: 'An Idempotency-Key header is required to create a payment intent.' },
  amount_must_be_string: { status: 400, message: 'Amounts must be sent as JSON strings, not numbers.' },
  invalid_amount: { status: 400, message: 'The amount must be a decimal string greater than zero with no more decimal places than the currency allows.' },
  currency_unsupported: { status: 400, message: 'No exchange rate is available for this currency.' },
  invalid_metadata: { status: 400, message: 'metadata must be a JSON object of at most 4096 bytes, nested at most 32 deep.' },
  invalid_url: { status: 400, message: 'success_url and cancel_url must be absolute http(s) URLs of at most 2048 characters.' },
  field_not_settable: { status: 400, message: 'This field is determined by the service and cannot be set.' },
  invalid_status: { status: 400, message: 'Unknown status filter.' },
  invalid_request: { status: 400, message: 'The request is invalid.' },
  payout_address_required: { status: 400, message: 'Set a live payout address before creating live payment intents.' },
  url_not_allowed: { status: 400, message: 'Webhook URLs must not point at private, loopback or link-local addresses.' },
  url_unresolvable: { status: 400, message: 'The webhook URL host does not resolve.' },
  invalid_listing_signature: { status: 400, message: 'A listing signature is missing or was not made by the key that controls its pay_to.' },
  unauthorized: { status: 401, message: 'Invalid API key.' },
  login_failed: { status: 401, message: 'Wrong email or password.' },
  invalid_payment: { status: 402, message: 'A payment leg does not verify against the quote.' },
  fee_leg_missing: { status: 402, message: 'The payment has no fee leg; a purchase needs both legs.' },
  forbidden: { status: 403, message: 'This operation is not allowed for this account or mode.' },
  csrf_failed: { status: 403, message: 'The request did not carry this page\'s CSRF token or came from another site; reload the page and try again.' },
  not_found: { status: 404, message: 'No such resource.' },
  no_matching_resource: { status: 404, message: 'No listing matches the capability under the price and latency ceilings.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this path.' },
  conflict: { status: 409, message: 'The resource already exists.' },
  idempotency_key_reused: { status: 409, message: 'This Idempotency-Key was already used with a different request body.' },
  slug_taken: { status: 409, message: 'This merchant already has a payment link with that slug.' },
  sold_out: { status: 409, message: 'Every unit of this payment link is sold or held.' },
  not_cancellable: { status: 409, message: 'This payment intent can no longer be canceled.' },
  endpoint_disabled: { status: 409, message: 'The webhook endpoint is disabled (it answered 410); set it again to re-enable it.' },
  invalid_invoice_status: { status: 409, message: "The invoice's status does not allow this: only a DRAFT is finalized, a DRAFT or OPEN invoice voided, an OPEN one marked uncollectible or paid." },
  not_refundable: { status: 409, message: 'Only PAID or PARTIALLY_REFUNDED payment intents can be refunded.' },
  refund_refused: { status: 409, message: 'The refund was refused, typically because it exceeds the refundable remainder.' },
  leg_replayed: { status: 409, message: 'A payment leg with this nonce was already used.' },
  quote_expired: { status: 410, message: 'The quote has expired; ask for a new one.' },
  payload_too_large: { status: 413, message: 'The request body exceeds 256 KiB.' },
  rate_limited: { status: 429, message: 'Too many requests; retry after the number of seconds in Retry-After.' },
  internal_error: { status: 500, message: 'An internal error occurred.' },
  seller_unreachable: { status: 502, message: 'The seller endpoint could not be reached.' },
  ledger_unavailable: { status: 503, message: "The payment lane's ledger could not be reached; retry shortly." },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export function errorType(status: number): ErrorType {
  return status >= 500 ? 'api_error' : 'invalid_request';
}

export interface ErrorEnvelope {
  error: { type: ErrorType; code: ErrorCode; message: string; request_id: string; retryAfter?: number };
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly opts: { retryAfter?: number; headers?: Record<string, string> } = {},
  ) {
    super(message ?? ERRORS[code].message);
    this.name = 'AppError';
    this.status = ERRORS[code].status;
  }
}

export { issuesMessage } from '../runtime/issues-message.ts';

// Fastify's own error codes, each given its code in this table. The ones below describe a bad
// request; every other code Fastify exports is a fault of ours (a route or plugin set up
// wrongly) and answers the generic 500. A test walks Fastify's exported `errorCodes`, so a code
// a new Fastify version adds must be placed before it passes.
export type FastifyErrorName = keyof typeof errorCodes;

export const FASTIFY_CLIENT_ERRORS = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  // Bodies must be application/json (spec "Errors": invalid_json), whichever parser saw them.
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'invalid_json',
  FST_ERR_VALIDATION: 'invalid_body',
  FST_ERR_NOT_FOUND: 'not_found',
  FST_ERR_BAD_URL: 'bad_request',
  // An id longer than any of ours names nothing: the 404 an unknown id gets, not Fastify's 414.
  FST_ERR_MAX_PARAM_LENGTH: 'not_found',
} as const satisfies Partial<Record<FastifyErrorName, ErrorCode>>;

/**
 * Codes Fastify marks 4xx that still mean a mistake of ours: a parser added after start, a
 * route schema without content, `inject` given a bad URL. Named so the test can tell them
 * from a client error someone forgot to map.
 */
export const FASTIFY_OWN_FAULTS_MARKED_4XX: readonly FastifyErrorName[] = [
  'FST_ERR_CTP_INSTANCE_ALREADY_STARTED',
  'FST_ERR_ROUTE_MISSING_CONTENT_TYPE',
  'FST_ERR_ROUTE_MISSING_CONTENT',
  'FST_ERR_INVALID_URL',
];

/** Refusals of the Fastify plugins we use (their own FST_ codes, not in Fastify's list). */
export const PLUGIN_CLIENT_ERRORS: Record<string, ErrorCode> = {
  // @fastify/csrf-protection: no session secret, or a missing or wrong token.
  FST_CSRF_MISSING_SECRET: 'csrf_failed',
  FST_CSRF_INVALID_TOKEN: 'csrf_failed',
};

/** The table code for a Fastify error code; anything not a client error is internal_error. */
function fastifyErrorCode(code: string): ErrorCode | undefined {
  if (!code.startsWith('FST_')) return undefined;
  return (FASTIFY_CLIENT_ERRORS as Record<string, ErrorCode>)[code] ?? PLUGIN_CLIENT_ERRORS[code] ?? 'internal_error';
}

// Runtime errors (runtime/errors.ts) by code: each is mapped here once. A TerminalError whose
// code is not listed is a fault of ours (500), as is every retryable error.
const RUNTIME_CODES: Record<string, ErrorCode> = {
  not_found: 'not_found',
  conflict: 'conflict',
  cursor_not_found: 'bad_request',
  invalid_origin: 'invalid_body',
  invalid_body: 'invalid_body',
  invalid_url: 'invalid_url',
  url_not_allowed: 'url_not_allowed',
  url_unresolvable: 'url_unresolvable',
  endpoint_disabled: 'endpoint_disabled',
};

/**
 * Whatever a handler threw, as an AppError: ours as is, a TerminalError of the runtime by its
 * code (its message is meant for the caller), Fastify's by its code (fastify-errors.ts);
 * anything unknown is a generic 500.
 */
export function ensureError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof MarketRefusal) {
    const message = err.reason ? `${err.message} (reason: ${err.reason})` : err.message;
    // As the per-IP limit does (gateway/market/rate-limit.ts): the wait in the envelope and the header.
    const wait = err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter, headers: { 'Retry-After': String(err.retryAfter) } };
    return new AppError(err.code, message, wait);
  }
  if (err instanceof TerminalError) {
    const code = RUNTIME_CODES[err.code];
    return code ? new AppError(code, err.message) : new AppError('internal_error');
  }
  const fst = err && typeof err === 'object' && 'code' in err && typeof err.code === 'string' ? fastifyErrorCode(err.code) : undefined;
  if (fst) return new AppError(fst);
  // Fastify's JSON parser (used by plugins on the root context) marks its SyntaxError 400.
  if (err instanceof SyntaxError && 'statusCode' in err && err.statusCode === 400) return new AppError('invalid_json');
  // A client that hung up or sent a broken stream is a bad request, not our fault.
  const status = err && typeof err === 'object' && !(err instanceof RuntimeError) && 'statusCode' in err ? Number(err.statusCode) : NaN;
  if (status === 413) return new AppError('payload_too_large');
  if (status >= 400 && status < 500) return new AppError('bad_request');
  return new AppError('internal_error');
}

/** The spec envelope. A 5xx never carries the thrown message. */
export function envelope(e: AppError, requestId: string): ErrorEnvelope {
  const message = e.status >= 500 ? ERRORS[e.code].message : e.message;
  return {
    error: {
      type: errorType(e.status),
      code: e.code,
      message,
      request_id: requestId,
      ...(e.status === 429 ? { retryAfter: e.opts.retryAfter ?? 1 } : {}),
    },
  };
}
