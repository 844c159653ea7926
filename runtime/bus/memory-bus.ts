import { RawJson, type Bus, type BusMessage, type ConsumeOptions, type Subscription } from './types.ts';
import { subjectMatches } from './subjects.ts';

interface Entry {
  subject: string;
  data: unknown;
  msgId: string | undefined;
  deliveries: number;
}

interface Member {
  handler: (msg: BusMessage) => Promise<void>;
  capacity: number;
  busy: number;
  ackWaitMs: number;
  /** Handlers started and not yet finished (what `stop` waits for). */
  running: Set<Promise<void>>;
}

class Durable {
  readonly queue: Entry[] = [];
  readonly members: Member[] = [];
  private rr = 0;

  constructor(readonly filter: string, private readonly timers: Set<NodeJS.Timeout>) {}

  push(e: Entry): void {
    this.queue.push(e);
    this.pump();
  }

  pump(): void {
    while (this.queue.length > 0) {
      const member = this.pickMember();
      if (!member) return;
      const entry = this.queue.shift()!;
      this.deliver(member, entry);
    }
  }

  private pickMember(): Member | undefined {
    for (let i = 0; i < this.members.length; i++) {
      const m = this.members[(this.rr + i) % this.members.length]!;
      if (m.busy < m.capacity) {
        this.rr = (this.rr + i + 1) % this.members.length;
        return m;
      }
    }
    return undefined;
  }

  private deliver(member: Member, entry: Entry): void {
    entry.deliveries += 1;
    member.busy += 1;
    let settled = false;
    const settle = (requeueAfter: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(ackTimer);
      this.timers.delete(ackTimer);
      member.busy -= 1;
      if (requeueAfter !== null) this.later(entry, requeueAfter);
      this.pump();
    };
    // Like JetStream's ack wait: an unacknowledged message comes back.
    const ackTimer = setTimeout(() => settle(0), member.ackWaitMs);
    this.timers.add(ackTimer);
    const msg: BusMessage = {
      subject: entry.subject,
      data: entry.data,
      msgId: entry.msgId,
      deliveries: entry.deliveries,
      ack: () => settle(null),
      nak: (delayMs = 0) => settle(delayMs),
    };
    queueMicrotask(() => {
      const handled: Promise<void> = member.handler(msg).catch(() => settle(1000)).finally(() => member.running.delete(handled));
      member.running.add(handled);
    });
  }

  private later(entry: Entry, delayMs: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.push(entry);
    }, delayMs);
    this.timers.add(t);
  }
}

/** In-process bus with NATS subject semantics: the embedded default and unit-test double. */
export class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  private readonly durables = new Map<string, Durable>();
  private readonly seen = new Map<string, number>();
  private readonly listeners = new Set<{ pattern: string; fn: (subject: string, data: unknown) => void }>();
  /** Messages published before any consumer matched them; JetStream keeps these in the stream. */
  private readonly backlog: Entry[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly dedupeWindowMs = 120_000) {}

  async publish(subject: string, data: unknown, opts: { msgId?: string } = {}): Promise<void> {
    const now = Date.now();
    if (opts.msgId !== undefined) {
      const at = this.seen.get(opts.msgId);
      if (at !== undefined && now - at < this.dedupeWindowMs) return;
      this.seen.set(opts.msgId, now);
      if (this.seen.size > 100_000) this.pruneSeen(now);
    }
    // Copy through JSON so a consumer never shares objects with the publisher, as over a wire.
    const text = data instanceof RawJson ? data.text : JSON.stringify(data);
    const entry = (): Entry => ({ subject, data: JSON.parse(text) as unknown, msgId: opts.msgId, deliveries: 0 });
    let matched = false;
    for (const d of this.durables.values()) {
      if (subjectMatches(d.filter, subject)) {
        d.push(entry());
        matched = true;
      }
    }
    if (!matched) this.backlog.push(entry());
  }

  private pruneSeen(now: number): void {
    for (const [k, at] of this.seen) if (now - at >= this.dedupeWindowMs) this.seen.delete(k);
  }

  async consume(opts: ConsumeOptions): Promise<Subscription> {
    let d = this.durables.get(opts.durable);
    if (!d) {
      d = new Durable(opts.subject, this.timers);
      this.durables.set(opts.durable, d);
      for (let i = this.backlog.length - 1; i >= 0; i--) {
        const e = this.backlog[i]!;
        if (subjectMatches(opts.subject, e.subject)) {
          this.backlog.splice(i, 1);
          d.queue.unshift(e);
        }
      }
    }
    const member: Member = { handler: opts.handler, capacity: opts.concurrency ?? 1, busy: 0, ackWaitMs: opts.ackWaitMs ?? 30_000, running: new Set() };
    d.members.push(member);
    d.pump();
    const durable = d;
    return {
      stop: async () => {
        const i = durable.members.indexOf(member);
        if (i >= 0) durable.members.splice(i, 1);
        // As over NATS: handlers still running are waited for. One delivered but not yet
        // started (its microtask pending) starts and is waited for too.
        await Promise.resolve();
        await Promise.allSettled([...member.running]);
      },
    };
  }

  emit(subject: string, data: unknown): void {
    for (const l of this.listeners) if (subjectMatches(l.pattern, subject)) l.fn(subject, data);
  }

  listen(subject: string, fn: (subject: string, data: unknown) => void): Subscription {
    const l = { pattern: subject, fn };
    this.listeners.add(l);
    return { stop: async () => void this.listeners.delete(l) };
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.durables.clear();
    this.listeners.clear();
  }
}
