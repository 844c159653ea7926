import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Poller, type PollerOptions, type PollStep } from './poller.ts';

/** A step that records when it ran (fake clock) and answers from a script. */
function scripted(answers: Array<boolean | Error> = []): { step: PollStep; at: number[] } {
  const at: number[] = [];
  const step: PollStep = async () => {
    at.push(Date.now());
    const a = answers.shift() ?? false;
    if (a instanceof Error) throw a;
    return a;
  };
  return { step, at };
}

describe('Poller', () => {
  let t0: number;
  beforeEach(() => {
    vi.useFakeTimers();
    t0 = Date.now();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const since = (at: number[]) => at.map((t) => t - t0);

  /** When the steps ran (ms after start) over `ms` of a loop whose steps answer `answers`. */
  async function stepTimes(answers: Array<boolean | Error>, opts: PollerOptions, ms: number): Promise<number[]> {
    const { step, at } = scripted(answers);
    const p = new Poller(step, opts);
    p.start();
    await vi.advanceTimersByTimeAsync(ms);
    await p.stop();
    return since(at);
  }

  it('runs at start, then every pollMs while steps find nothing more', async () => {
    expect(await stepTimes([], { pollMs: 100 }, 350)).toEqual([0, 100, 200, 300]);
  });

  it('runs again at once after a full batch', async () => {
    // A zero delay is a millisecond on the fake clock.
    expect(await stepTimes([true, true, false], { pollMs: 100 }, 150)).toEqual([0, 1, 2, 102]);
  });

  it('a nudge while idle brings the next step forward to gatherMs, never later than it was due', async () => {
    const { step, at } = scripted();
    const p = new Poller(step, { pollMs: 1_000, gatherMs: 20 });
    p.start();
    await vi.advanceTimersByTimeAsync(100);
    p.nudge();
    await vi.advanceTimersByTimeAsync(10);
    p.nudge(); // within the gather window: does not push the step back
    await vi.advanceTimersByTimeAsync(15);
    expect(since(at)).toEqual([0, 120]);
    // Due in 5 ms: a nudge with a 20 ms gather leaves it due in 5 ms.
    await vi.advanceTimersByTimeAsync(990);
    p.nudge();
    await vi.advanceTimersByTimeAsync(10);
    await p.stop();
    expect(since(at)).toEqual([0, 120, 1_120]);
  });

  it('a nudge during a step runs another one gatherMs after it', async () => {
    let release!: () => void;
    const at: number[] = [];
    const step: PollStep = async () => {
      at.push(Date.now());
      if (at.length === 1) await new Promise<void>((r) => (release = r));
      return false;
    };
    const p = new Poller(step, { pollMs: 1_000, gatherMs: 20 });
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    p.nudge();
    await vi.advanceTimersByTimeAsync(50);
    release();
    await vi.advanceTimersByTimeAsync(30);
    await p.stop();
    expect(since(at)).toEqual([0, 70]);
  });

  it('backs off after failures, doubling up to maxBackoffMs, and a nudge does not cut it short', async () => {
    const errors: unknown[] = [];
    const boom = new Error('database down');
    const { step, at } = scripted([boom, boom, boom, boom, false]);
    const p = new Poller(step, { pollMs: 100, gatherMs: 0, maxBackoffMs: 300, onError: (e) => errors.push(e) });
    p.start();
    await vi.advanceTimersByTimeAsync(50);
    p.nudge();
    await vi.advanceTimersByTimeAsync(1_000);
    await p.stop();
    // Failures at 0, 100, 300, 600; then 600 + 300 succeeds and the loop polls again.
    expect(since(at)).toEqual([0, 100, 300, 600, 900, 1_000]);
    expect(errors).toEqual([boom, boom, boom, boom]);
  });

  it('keeps running after a failure: the next success resets the back-off', async () => {
    // fail at 0 (wait 100), ok at 100 (wait 100), fail at 200 (wait 100, not 200), ok at 300.
    expect(await stepTimes([new Error('once'), false, new Error('again')], { pollMs: 100, maxBackoffMs: 10_000 }, 310)).toEqual([0, 100, 200, 300]);
  });

  it('stop waits for the step in progress and schedules nothing after it', async () => {
    let release!: () => void;
    let ended = false;
    const at: number[] = [];
    const step: PollStep = async () => {
      at.push(Date.now());
      await new Promise<void>((r) => (release = r));
      ended = true;
      return true; // "more": would run again at once if not stopped
    };
    const p = new Poller(step, { pollMs: 100 });
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    let stopped = false;
    const stopping = p.stop().then(() => (stopped = true));
    p.nudge();
    await vi.advanceTimersByTimeAsync(50);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(ended).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(at).toHaveLength(1);
    expect(p.isStopped).toBe(true);
  });

  it('never overlaps steps, even when restarted while one is running', async () => {
    let running = 0;
    let most = 0;
    const step: PollStep = async () => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 30));
      running -= 1;
      return false;
    };
    const p = new Poller(step, { pollMs: 10 });
    p.start();
    await vi.advanceTimersByTimeAsync(5);
    const stopping = p.stop();
    p.start();
    await vi.advanceTimersByTimeAsync(200);
    await stopping;
    const last = p.stop();
    await vi.advanceTimersByTimeAsync(100);
    await last;
    expect(most).toBe(1);
  });
});
