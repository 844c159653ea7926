import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryBus } from '../bus/memory-bus.ts';
import type { SnapshotFeedItem } from './actor-types.ts';
import { SnapshotFeed } from './snapshot-feed.ts';

const item = (id: string, version: number): SnapshotFeedItem => ({
  id,
  kind: 'payment_intent',
  merchant: 'm',
  mode: 'test',
  version,
  status: 'AWAITING_PAYMENT',
  snapshot: { value: 'awaiting', context: {} },
  event: 'intent.create',
});

describe('SnapshotFeed holds its bus subscription only while someone listens', () => {
  afterEach(() => vi.useRealTimers());

  it('subscribes on the first listener, delivers, and lets go a while after the last one leaves', async () => {
    vi.useFakeTimers();
    const bus = new MemoryBus();
    const listen = vi.spyOn(bus, 'listen');
    const feed = new SnapshotFeed(bus);
    feed.start();
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 1));
    expect(listen).not.toHaveBeenCalled();

    const one: number[] = [];
    const all: string[] = [];
    const offOne = feed.subscribe('pay_1', (i) => one.push(i.version));
    const offAll = feed.subscribeAll((i) => all.push(`${i.id}@${i.version}`));
    await feed.ready();
    expect(listen).toHaveBeenCalledTimes(1);
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 2));
    bus.emit('snap.payment_intent.pay_2', item('pay_2', 1));
    expect(one).toEqual([2]);
    expect(all).toEqual(['pay_1@2', 'pay_2@1']);

    offOne();
    offAll();
    expect(feed.listenerCount()).toBe(0);
    // A stream opened during the linger reuses the subscription.
    const offAgain = feed.subscribe('pay_1', (i) => one.push(i.version));
    vi.advanceTimersByTime(60_000);
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 3));
    expect(one).toEqual([2, 3]);
    expect(listen).toHaveBeenCalledTimes(1);
    offAgain();
    vi.advanceTimersByTime(60_000);
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 4));
    expect(one).toEqual([2, 3]);
    // The next listener subscribes afresh.
    feed.subscribe('pay_1', (i) => one.push(i.version));
    expect(listen).toHaveBeenCalledTimes(2);
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 5));
    expect(one).toEqual([2, 3, 5]);
    await feed.stop();
    await bus.close();
  });

  it('does not listen before start, and subscribes at start for listeners added before it', async () => {
    const bus = new MemoryBus();
    const feed = new SnapshotFeed(bus);
    const got: number[] = [];
    feed.subscribe('pay_1', (i) => got.push(i.version));
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 1));
    feed.start();
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 2));
    expect(got).toEqual([2]);
    await feed.stop();
    await bus.close();
  });

  it('an owner listener gets every actor of its kind, merchant and mode, and no other', async () => {
    const bus = new MemoryBus();
    const feed = new SnapshotFeed(bus);
    feed.start();
    const got: string[] = [];
    const off = feed.subscribeOwner({ kind: 'invoice', merchant: 'm', mode: 'test' }, (i) => got.push(`${i.id}@${i.version}`));
    await feed.ready();
    const inv = (id: string, version: number, over: Partial<SnapshotFeedItem> = {}): SnapshotFeedItem => ({ ...item(id, version), kind: 'invoice', ...over });
    bus.emit('snap.invoice.inv_1', inv('inv_1', 1));
    bus.emit('snap.invoice.inv_2', inv('inv_2', 1));
    bus.emit('snap.invoice.inv_3', inv('inv_3', 1, { mode: 'live' }));
    bus.emit('snap.invoice.inv_4', inv('inv_4', 1, { merchant: 'other' }));
    bus.emit('snap.payment_intent.pay_1', item('pay_1', 1));
    expect(got).toEqual(['inv_1@1', 'inv_2@1']);
    expect(feed.listenerCount()).toBe(1);
    off();
    expect(feed.listenerCount()).toBe(0);
    bus.emit('snap.invoice.inv_1', inv('inv_1', 2));
    expect(got).toHaveLength(2);
    await feed.stop();
    await bus.close();
  });
});
