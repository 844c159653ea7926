/** The current time, ticking once a second while the host is connected (countdowns). */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

export class ClockController implements ReactiveController {
  now = Date.now();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly everyMs = 1000,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.now = Date.now();
    this.timer = setInterval(() => {
      this.now = Date.now();
      this.host.requestUpdate();
    }, this.everyMs);
  }

  hostDisconnected(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
