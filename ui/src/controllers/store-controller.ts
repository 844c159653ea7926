/** Re-renders its host on every change of an @xstate/store; subscribed only while connected. */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

interface Subscribable<S> {
  getSnapshot(): S;
  subscribe(fn: (s: S) => void): { unsubscribe(): void };
}

export class StoreController<S> implements ReactiveController {
  private sub: { unsubscribe(): void } | undefined;
  value: S;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly store: Subscribable<S>,
  ) {
    this.value = store.getSnapshot();
    host.addController(this);
  }

  hostConnected(): void {
    this.value = this.store.getSnapshot();
    this.sub = this.store.subscribe((s) => {
      this.value = s;
      this.host.requestUpdate();
    });
  }

  hostDisconnected(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
  }
}
