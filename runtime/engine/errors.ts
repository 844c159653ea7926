/** Engine errors: terminal ones are parked, the rest redelivered (runtime/errors.ts). */
import { RuntimeError, TerminalError } from '../errors.ts';

export { isRetryable } from '../errors.ts';

/** The event failed its schema: rejected before any transaction starts. */
export class MalformedEventError extends TerminalError {
  constructor(details: unknown) {
    super('malformed_event', 'event does not match its schema', { details });
  }
}

/** Retryable: over the bus, an event can overtake the create that it follows. */
export class UnknownActorError extends RuntimeError {
  constructor(id: string) {
    super('unknown_actor', `no actor ${id}`);
  }
}

export class UnknownKindError extends TerminalError {
  constructor(kind: string) {
    super('unknown_kind', `no machine registered for kind ${kind}`);
  }
}

/** Someone else wrote the row between our read and write; the event can simply be retried. */
export class VersionConflictError extends RuntimeError {
  constructor(id: string) {
    super('version_conflict', `actor ${id} changed underneath`);
  }
}

/**
 * A companion's guard did not hold (`CreateCompanion.guard`): nothing of the event was written.
 * Terminal for this attempt: the caller decides, without the companion, what to do.
 */
export class CompanionRefusedError extends TerminalError {
  constructor(id: string, companion: string) {
    super('companion_refused', `the ${companion} rows of an event for ${id} could not all be written`);
  }
}

/**
 * When a message whose handling failed comes back: exponential from 100 ms, capped at 30 s;
 * null once it has failed 40 times (about a day of retries): park it instead of looping forever.
 */
export function redeliveryDelayMs(deliveries: number): number | null {
  return deliveries < 40 ? Math.min(30_000, 100 * 2 ** Math.min(deliveries, 9)) : null;
}
