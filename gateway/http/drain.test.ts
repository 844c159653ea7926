import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { drainer } from './drain.ts';

/** docs/deploy.md "Stopping": `/healthz` answers 503 for HTTP_DRAIN_MS before the listener closes. */
describe('drainer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const settled = (p: Promise<void>) => {
    const state = { done: false };
    void p.then(() => (state.done = true));
    return state;
  };

  it('waits drainMs from the first drain(), however many ports drain', async () => {
    let now = 1_000;
    const d = drainer(10_000, () => now);
    expect(d.lifecycle.draining).toBe(false);
    d.drain();
    expect(d.lifecycle.draining).toBe(true);
    now += 4_000;
    d.drain(); // the second port does not restart the time
    const closed = settled(d.drained());
    await vi.advanceTimersByTimeAsync(5_999);
    expect(closed.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed.done).toBe(true);
  });

  it('drained() without drain() drains first, then waits the whole time', async () => {
    const d = drainer(300, () => 0);
    const closed = settled(d.drained());
    expect(d.lifecycle.draining).toBe(true);
    await vi.advanceTimersByTimeAsync(299);
    expect(closed.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed.done).toBe(true);
  });

  it('waits nothing once the time has run out since the first drain()', async () => {
    let now = 0;
    const d = drainer(300, () => now);
    d.drain();
    now = 300;
    const closed = settled(d.drained());
    await vi.advanceTimersByTimeAsync(0);
    expect(closed.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
