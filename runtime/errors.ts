/**
 * Errors of the runtime, in two classes as Restate's SDK has them. A `TerminalError` fails the
 * same way however often it is retried (bad input, a missing resource, a conflict): a consumer
 * parks the message and the gateway answers with the 4xx its code names. Every other error
 * (a lost connection, a version race, a bug) may pass on a retry and is redelivered.
 *
 * Errors the runtime throws on purpose extend `RuntimeError`, whose `code` the gateway maps once
 * (gateway/errors.ts); `ensureError` turns whatever a `catch` caught into an Error at each
 * boundary (bus consumer, HTTP handler, CLI) so nothing downstream handles a non-Error.
 */
export class RuntimeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown; details?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    if (options?.details !== undefined) this.details = options.details;
  }

  /** What made the input bad, for logs (never sent to an HTTP client). */
  details?: unknown;
}

/** Retrying cannot help: the same input fails the same way. */
export class TerminalError extends RuntimeError {}

/** Whatever was thrown, as an Error (a thrown string or object is wrapped, keeping it as the cause). */
export function ensureError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  let text: string;
  try {
    text = typeof thrown === 'string' ? thrown : (JSON.stringify(thrown) ?? String(thrown));
  } catch {
    text = String(thrown);
  }
  return new Error(`non-Error thrown: ${text}`, { cause: thrown });
}

/** Worth another delivery: anything but a TerminalError. */
export function isRetryable(thrown: unknown): boolean {
  return !(thrown instanceof TerminalError);
}
