import type { Db } from '../../storage/db.ts';
import type { Bus } from '../bus/types.ts';
import { WebhookIntake, type IntakeOptions } from './intake.ts';
import { DeliveryWorker, type DeliveryWorkerOptions } from './worker.ts';

/**
 * The webhook side of a runtime process: the intake consumer and the delivery worker,
 * started after the engine and stopped before it (services.ts).
 */
export interface WebhookRuntimeOptions {
  allowPrivate: boolean;
  worker?: Omit<DeliveryWorkerOptions, 'allowPrivate'>;
  intake?: Omit<IntakeOptions, 'onDeliveries'>;
  /**
   * Re-read webhook facts from the outbox on start. Default: only on the in-process bus,
   * which loses what it held when the process died; JetStream keeps them itself.
   */
  reconcile?: boolean;
  log?: (msg: string) => void;
}

export class WebhookRuntime {
  readonly worker: DeliveryWorker;
  readonly intake: WebhookIntake;

  constructor(
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly opts: WebhookRuntimeOptions,
  ) {
    // Database trouble repeats on every poll: say it once per 10 s, not 4 times a second.
    let lastLog = 0;
    const onError = (err: unknown): void => {
      if (Date.now() - lastLog < 10_000) return;
      lastLog = Date.now();
      opts.log?.(`webhooks: ${err instanceof Error ? err.message : String(err)}`);
    };
    this.worker = new DeliveryWorker(db, { onError, ...opts.worker, allowPrivate: opts.allowPrivate });
    this.intake = new WebhookIntake(db, bus, { ...opts.intake, onDeliveries: () => this.worker.nudge() });
  }

  async start(): Promise<void> {
    if (this.opts.reconcile ?? this.bus.kind === 'memory') {
      const n = await this.intake.reconcileFromOutbox();
      if (n > 0) this.opts.log?.(`webhooks: recovered ${n} event(s) from the outbox`);
    }
    await this.intake.start();
    this.worker.start();
  }

  async stop(): Promise<void> {
    await this.intake.stop();
    await this.worker.stop();
  }
}
