/**
 * Draining of one listening edge (docs/deploy.md "Stopping"): `/healthz` answers 503 for
 * HTTP_DRAIN_MS before the listener closes. The time runs from the first `drain()`, so a
 * process that drains its merchant and marketplace ports together waits it once, not twice.
 */
export interface Drain {
  /** What `/healthz` reads (gateway/routes/health.ts). */
  readonly lifecycle: { draining: boolean };
  /** From now on `/healthz` answers 503. */
  drain: () => void;
  /** Drains, then waits what is left of `drainMs` since the first `drain()`. */
  drained: () => Promise<void>;
}

export function drainer(drainMs = 0, clock: () => number = Date.now): Drain {
  const lifecycle = { draining: false };
  let since = 0;
  const drain = (): void => {
    if (lifecycle.draining) return;
    lifecycle.draining = true;
    since = clock();
  };
  return {
    lifecycle,
    drain,
    drained: async () => {
      drain();
      const left = drainMs - (clock() - since);
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    },
  };
}
