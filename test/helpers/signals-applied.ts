import type { Bus, BusMessage } from '../../runtime/bus/types.ts';

/**
 * The chain signals an indexer published and the ones the chain router acked (acked once every
 * actor the signal names has committed it), by message id: a harness waits for the second to
 * hold the first instead of giving the router a fixed time, which a loaded machine outruns.
 */
export class SignalsApplied {
  private readonly published = new Set<string>();
  private readonly acked = new Set<string>();

  constructor(private readonly bus: Bus) {}

  /** The bus as the indexer sees it: a signal's id is noted before it is published, so it is never missed. */
  forIndexer(): Bus {
    return this.wrap({
      publish: (subject, data, opts) => {
        if (opts?.msgId !== undefined) this.published.add(opts.msgId);
        return this.bus.publish(subject, data, opts);
      },
    });
  }

  /** The bus as the router sees it: a message's id is noted when the router acks it. */
  forRouter(): Bus {
    return this.wrap({
      consume: (o) =>
        this.bus.consume({
          ...o,
          handler: (m) => {
            const tracked: BusMessage = {
              subject: m.subject,
              data: m.data,
              msgId: m.msgId,
              deliveries: m.deliveries,
              ack: () => {
                m.ack();
                if (m.msgId !== undefined) this.acked.add(m.msgId);
              },
              nak: (delayMs) => m.nak(delayMs),
            };
            return o.handler(tracked);
          },
        }),
    });
  }

  /** Every signal published so far has been applied. */
  caughtUp(): boolean {
    for (const id of this.published) if (!this.acked.has(id)) return false;
    return true;
  }

  private wrap(over: Partial<Pick<Bus, 'publish' | 'consume'>>): Bus {
    const bus = this.bus;
    return {
      kind: bus.kind,
      publish: over.publish ?? ((subject, data, opts) => bus.publish(subject, data, opts)),
      consume: over.consume ?? ((o) => bus.consume(o)),
      emit: (subject, data, json) => bus.emit(subject, data, json),
      listen: (subject, handler) => bus.listen(subject, handler),
      close: () => bus.close(),
    };
  }
}
