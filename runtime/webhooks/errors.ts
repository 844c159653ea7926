/**
 * Errors of the webhook management operations, with the HTTP status and spec error code the
 * gateway answers with. Delivery failures are not errors: they are attempt rows.
 */
import { TerminalError } from '../errors.ts';
export type WebhookErrorCode = 'invalid_body' | 'invalid_url' | 'url_not_allowed' | 'url_unresolvable' | 'not_found' | 'endpoint_disabled';

const STATUS: Record<WebhookErrorCode, number> = {
  invalid_body: 400,
  invalid_url: 400,
  url_not_allowed: 400,
  url_unresolvable: 400,
  not_found: 404,
  endpoint_disabled: 409,
};

export class WebhookError extends TerminalError {
  readonly status: number;
  constructor(
    override readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(code, message);
    this.status = STATUS[code];
  }
}
