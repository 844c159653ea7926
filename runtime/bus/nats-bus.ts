import {
  AckPolicy,
  DeliverPolicy,
  JSONCodec,
  RetentionPolicy,
  StorageType,
  connect,
  nanos,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import type { Bus, BusMessage, ConsumeOptions, Subscription } from './types.ts';
import { RawJson, STREAMS } from './types.ts';
import { jsonBytes } from './json-bytes.ts';

export interface NatsBusOptions {
  url: string;
  /** Prefix of every subject and stream name; lets tests share one server without crosstalk. */
  namespace?: string;
  /** How long JetStream keeps messages; consumers that fall further behind lose them. */
  maxAgeMs?: number;
}

const codec = JSONCodec();

/** NATS JetStream adapter: durable streams with `Nats-Msg-Id` dedupe and durable pull consumers. */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private readonly subs = new Set<Subscription>();
  private emits: Array<{ subject: string; data: Uint8Array }> = [];
  private acks: JsMsg[] = [];

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly namespace: string,
  ) {}

  static async connect(opts: NatsBusOptions): Promise<NatsBus> {
    const nc = await connect({ servers: opts.url, name: 'anmpay', maxReconnectAttempts: -1, reconnectTimeWait: 250,
      // An async stack trace captured on every publish and request costs more than the
      // publish itself on the hot paths (outbox relay, indexer); errors still carry their own.
      noAsyncTraces: true });
    const jsm = await nc.jetstreamManager();
    const ns = opts.namespace ?? 'anmpay';
    const bus = new NatsBus(nc, nc.jetstream(), jsm, ns);
    for (const [name, subjects] of Object.entries(STREAMS)) {
      const cfg = {
        name: bus.streamName(name),
        subjects: subjects.map((s) => `${ns}.${s}`),
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_age: nanos(opts.maxAgeMs ?? 7 * 24 * 3600_000),
        duplicate_window: nanos(120_000),
      };
      try {
        await jsm.streams.info(cfg.name);
        await jsm.streams.update(cfg.name, cfg);
      } catch {
        await jsm.streams.add(cfg);
      }
    }
    return bus;
  }

  private streamName(name: string): string {
    return `${this.namespace.replace(/[^A-Za-z0-9_-]/g, '_')}_${name}`;
  }

  private streamFor(subject: string): string {
    const root = subject.split('.')[0];
    for (const [name, subjects] of Object.entries(STREAMS)) {
      if (subjects.some((s) => s.split('.')[0] === root)) return this.streamName(name);
    }
    throw new Error(`no stream owns subject ${subject}`);
  }

  async publish(subject: string, data: unknown, opts: { msgId?: string } = {}): Promise<void> {
    const bytes = data instanceof RawJson ? Buffer.from(data.text, 'utf8') : jsonBytes(data);
    await this.js.publish(`${this.namespace}.${subject}`, bytes, opts.msgId ? { msgID: opts.msgId } : undefined);
  }

  async consume(opts: ConsumeOptions): Promise<Subscription> {
    const stream = this.streamFor(opts.subject);
    const concurrency = opts.concurrency ?? 1;
    const durable = opts.durable.replace(/[^A-Za-z0-9_-]/g, '_');
    try {
      await this.jsm.consumers.info(stream, durable);
    } catch {
      await this.jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: `${this.namespace}.${opts.subject}`,
        ack_wait: nanos(opts.ackWaitMs ?? 30_000),
        max_deliver: -1,
        max_ack_pending: 10_000,
      });
    }
    const consumer = await this.js.consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: Math.max(concurrency * 2, 16) });
    const prefix = this.namespace.length + 1;
    let inflight = 0;
    let wake: (() => void) | undefined;
    // Handlers still running when the subscription stops are waited for: a stopped consumer
    // must not go on applying events (and starting their effects) behind its caller's back.
    const running = new Set<Promise<void>>();
    const done = (async () => {
      for await (const m of messages) {
        while (inflight >= concurrency) await new Promise<void>((r) => (wake = r));
        inflight += 1;
        const msg: BusMessage = {
          subject: m.subject.slice(prefix),
          data: codec.decode(m.data),
          msgId: m.headers?.get('Nats-Msg-Id') || undefined,
          deliveries: m.info.redeliveryCount,
          ack: () => this.ack(m),
          nak: (delayMs?: number) => m.nak(delayMs),
        };
        const handled: Promise<void> = opts
          .handler(msg)
          .catch(() => m.nak(1000))
          .finally(() => {
            inflight -= 1;
            running.delete(handled);
            const w = wake;
            wake = undefined;
            w?.();
          });
        running.add(handled);
      }
    })();
    const sub: Subscription = {
      stop: async () => {
        this.subs.delete(sub);
        await messages.close();
        await done.catch(() => undefined);
        await Promise.allSettled([...running]);
        this.flushAcks();
      },
    };
    this.subs.add(sub);
    return sub;
  }

  /**
   * Acks wait for the end of the event loop's turn and leave together. Each handler acks when
   * its commit's reply arrives, a microtask checkpoint of its own, so acking at once was one
   * socket write and one wake-up of nats-server per message (a press of Pay had one for its
   * hold's create); the replies that arrive in one turn now share a write. Ack semantics are
   * unchanged: a message acked late, or not at all when the process dies, is redelivered and
   * the consumer's dedupe drops it.
   */
  private ack(m: JsMsg): void {
    if (this.acks.length === 0) setImmediate(() => this.flushAcks());
    this.acks.push(m);
  }

  private flushAcks(): void {
    const batch = this.acks;
    this.acks = [];
    for (const m of batch) {
      try {
        m.ack();
      } catch {
        // Closed meanwhile: the message is redelivered and dropped as a repeat.
      }
    }
  }

  /**
   * Feed items wait up to 5 ms and leave together: the client writes once per microtask
   * checkpoint, and each commit's reply is a checkpoint of its own, so one emit per commit was
   * one socket write (and one wake-up of nats-server) per event. Gathered per turn of the event
   * loop it still cost nats-server 0.038 ms per create in bench:api, 0.027 ms with the 5 ms
   * window. Encoded now: the item is what the commit left.
   */
  emit(subject: string, data: unknown, json?: string): void {
    if (this.emits.length === 0) setTimeout(() => this.flushEmits(), 5);
    this.emits.push({ subject: `${this.namespace}.${subject}`, data: json === undefined ? jsonBytes(data) : Buffer.from(json, 'utf8') });
  }

  private flushEmits(): void {
    const batch = this.emits;
    this.emits = [];
    try {
      for (const e of batch) this.nc.publish(e.subject, e.data);
    } catch {
      // Closed meanwhile: the feed is fire-and-forget.
    }
  }

  listen(subject: string, fn: (subject: string, data: unknown) => void): Subscription {
    const sub = this.nc.subscribe(`${this.namespace}.${subject}`);
    const prefix = this.namespace.length + 1;
    void (async () => {
      for await (const m of sub) fn(m.subject.slice(prefix), codec.decode(m.data));
    })();
    // The server has the subscription once it answers a PING sent after it.
    const ready = this.nc.flush().catch(() => undefined);
    return { stop: async () => sub.unsubscribe(), ready };
  }

  /** Removes this namespace's streams (tests). */
  async dispose(): Promise<void> {
    for (const name of Object.keys(STREAMS)) await this.jsm.streams.delete(this.streamName(name)).catch(() => false);
  }

  async close(): Promise<void> {
    this.flushEmits();
    this.flushAcks();
    for (const s of [...this.subs]) await s.stop();
    await this.nc.drain().catch(() => undefined);
  }
}
