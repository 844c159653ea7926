/** Typed engine errors. Retryable ones are worth a redelivery; terminal ones are not. */
export class EngineError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

/** The event failed its schema: rejected before any transaction starts. */
export class MalformedEventError extends EngineError {
  constructor(details: unknown) {
    super('malformed_event', 'event does not match its schema', false, details);
    this.name = 'MalformedEventError';
  }
}

/** Retryable: over the bus, an event can overtake the create that it follows. */
export class UnknownActorError extends EngineError {
  constructor(id: string) {
    super('unknown_actor', `no actor ${id}`, true);
    this.name = 'UnknownActorError';
  }
}

export class UnknownKindError extends EngineError {
  constructor(kind: string) {
    super('unknown_kind', `no machine registered for kind ${kind}`, false);
    this.name = 'UnknownKindError';
  }
}

/** Someone else wrote the row between our read and write; the event can simply be retried. */
export class VersionConflictError extends EngineError {
  constructor(id: string) {
    super('version_conflict', `actor ${id} changed underneath`, true);
    this.name = 'VersionConflictError';
  }
}

/** Worth another delivery unless the error says it is terminal (`retryable: false`). */
export function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'retryable' in err ? Boolean(err.retryable) : true;
}

/**
 * When a message whose handling failed comes back: exponential from 100 ms, capped at 30 s;
 * null once it has failed 40 times (about a day of retries): park it instead of looping forever.
 */
export function redeliveryDelayMs(deliveries: number): number | null {
  return deliveries < 40 ? Math.min(30_000, 100 * 2 ** Math.min(deliveries, 9)) : null;
}
