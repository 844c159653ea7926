/**
 * The bus port: NATS JetStream in production, an in-process bus with the same subject
 * semantics for the embedded default. Durable streams carry actor events, outbox effects and
 * chain signals (at-least-once, deduped by message id); the ephemeral side carries the
 * snapshot feed, which nobody needs to replay.
 */
/**
 * A message body already encoded as JSON text (the outbox stores its payloads as JSON): the
 * bus sends these bytes as they are, and consumers receive the value they encode, as for any
 * other body. Saves the outbox relay a parse and a re-encoding per row.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

export interface BusMessage {
  readonly subject: string;
  readonly data: unknown;
  readonly msgId: string | undefined;
  /** How many times this message has been delivered, starting at 1. */
  readonly deliveries: number;
  ack(): void;
  /** Ask for redelivery after `delayMs`. */
  nak(delayMs?: number): void;
}

export interface ConsumeOptions {
  /** Durable consumer name; processes using the same name share the work. */
  durable: string;
  /** Subject filter with NATS wildcards (`*`, `>`), without the namespace prefix. */
  subject: string;
  handler: (msg: BusMessage) => Promise<void>;
  /** Messages handled at once by this process. */
  concurrency?: number;
  /** Redelivery if not acked within this time. */
  ackWaitMs?: number;
}

export interface Subscription {
  /** Stops deliveries; for a consumer, resolves once its handlers in flight have finished. */
  stop(): Promise<void>;
  /** Resolves once the bus delivers to this subscription (`listen`; absent: at once). */
  ready?: Promise<void>;
}

export interface Bus {
  readonly kind: 'nats' | 'memory';
  /** Durable publish; a repeated `msgId` inside the dedupe window is dropped by the bus. */
  publish(subject: string, data: unknown, opts?: { msgId?: string }): Promise<void>;
  consume(opts: ConsumeOptions): Promise<Subscription>;
  /**
   * Fire-and-forget publication to live listeners (snapshot feed). `json`, when given, is
   * `data` already encoded: a bus that sends bytes sends it instead of encoding `data`.
   */
  emit(subject: string, data: unknown, json?: string): void;
  listen(subject: string, handler: (subject: string, data: unknown) => void): Subscription;
  close(): Promise<void>;
}

/** The durable streams and the subjects each one owns. */
export const STREAMS = {
  ACTORS: ['actor.>'],
  EFFECTS: ['fx.>'],
  CHAIN: ['chain.>'],
} as const;
