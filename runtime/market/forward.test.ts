/**
 * The routed-execution call (DESIGN §5 "Routed execution"): the answer cap, and the SSRF
 * rules for names as well as IP literals, at the check and again at connect time.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkTarget, forward, prepareCall, type ForwardResult } from './forward.ts';

let server: http.Server;
let port: number;
let calls = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    calls++;
    res.setHeader('content-type', 'text/plain');
    // Headers and a first chunk, then nothing: only the whole-exchange timeout ends the call.
    if (req.url === '/stall') return void res.write('partial');
    res.end(req.url === '/big' ? 'x'.repeat(5000) : 'small');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const get = (path: string, host = '127.0.0.1') => ({ url: `http://${host}:${port}${path}`, method: 'GET', headers: {}, body: null });

describe('forward', () => {
  it('passes an answer under the cap and refuses one over it ("response bodies capped")', async () => {
    const ok = await forward(get('/small'), { allowPrivate: true, maxBodyBytes: 1000 });
    expect(ok).toMatchObject({ ok: true, status: 200, headers: { 'content-type': 'text/plain' } });
    expect(ok.ok && ok.body.toString()).toBe('small');
    const big = await forward(get('/big'), { allowPrivate: true, maxBodyBytes: 1000 });
    expect(big.ok ? null : [big.sent, big.reason]).toEqual([true, "the seller's answer exceeds 1000 bytes"]);
  });

  it('ends a call whose answer stalls after its first bytes at the timeout, and keeps serving calls ("Timeout 30 s")', async () => {
    const started = Date.now();
    const stalled = await forward(get('/stall'), { allowPrivate: true, timeoutMs: 300 });
    expect(stalled).toEqual({ ok: false, sent: true, reason: 'no answer within 300 ms' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const ok = await forward(get('/small'), { allowPrivate: true, timeoutMs: 300 });
    expect(ok.ok && ok.body.toString()).toBe('small');
  });

  it('without an override the limit is 30 s: a stalled call still waits at 29.9 s and ends at 30 s (DESIGN §5 "timeout 30 s")', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let done: ForwardResult | undefined;
      void forward(get('/stall'), { allowPrivate: true }).then((r) => (done = r));
      await vi.advanceTimersByTimeAsync(29_900);
      expect(done).toBeUndefined();
      await vi.advanceTimersByTimeAsync(200);
      expect(done).toEqual({ ok: false, sent: true, reason: 'no answer within 30000 ms' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses loopback by literal and by name without the development switch, before connecting ("SSRF rules as for webhooks")', async () => {
    const before = calls;
    expect(await checkTarget(`http://127.0.0.1:${port}/small`, { allowPrivate: false })).toMatch(/loopback/);
    expect(await checkTarget(`http://localhost:${port}/small`, { allowPrivate: false })).toMatch(/loopback/);
    expect(await checkTarget(`http://localhost:${port}/small`, { allowPrivate: true })).toBeNull();
    expect(await forward(get('/small'), { allowPrivate: false })).toMatchObject({ ok: false, sent: false });
    // A name that resolves to loopback is refused by the guarded lookup when connecting.
    expect(await forward(get('/small', 'localhost'), { allowPrivate: false })).toMatchObject({ ok: false, sent: false });
    expect(calls).toBe(before);
  });

  it('a target allowed once is not judged again only when its verdict cannot change: a name is looked up on every check', async () => {
    const strict = { allowPrivate: false, lookupAll: vi.fn(async (host: string) => [{ address: host === 'rebind.example' ? '93.184.216.34' : '127.0.0.1', family: 4 }]) };
    expect(await checkTarget('http://rebind.example/x', strict)).toBeNull();
    strict.lookupAll.mockImplementation(async () => [{ address: '10.0.0.7', family: 4 }]);
    expect(await checkTarget('http://rebind.example/x', strict)).toMatch(/private/);
    expect(strict.lookupAll).toHaveBeenCalledTimes(2);
    // A public literal needs no look-up; a literal allowed under the development switch stays refused without it.
    expect(await checkTarget('http://93.184.216.34/x', strict)).toBeNull();
    expect(await checkTarget('http://93.184.216.34/x', strict)).toBeNull();
    expect(await checkTarget(`http://127.0.0.1:${port}/small`, { allowPrivate: true })).toBeNull();
    expect(await checkTarget(`http://127.0.0.1:${port}/small`, strict)).toMatch(/loopback/);
    expect(strict.lookupAll).toHaveBeenCalledTimes(2);
  });

  it('reaches exactly the allowed origin (the demo seller, ADR 0037) and still refuses other loopback targets', async () => {
    const origin = `http://127.0.0.1:${port}`;
    const opts = { allowPrivate: false, allowOrigin: (o: string) => o === origin };
    expect(await checkTarget(`${origin}/small`, opts)).toBeNull();
    const ok = await forward(get('/small'), opts);
    expect(ok.ok && ok.body.toString()).toBe('small');
    const before = calls;
    // Same host, another port; same port by name: neither is the allowed origin.
    expect(await checkTarget(`http://127.0.0.1:${port + 1}/small`, opts)).toMatch(/loopback/);
    expect(await checkTarget(`http://localhost:${port}/small`, opts)).toMatch(/loopback/);
    expect(await forward(get('/small', 'localhost'), opts)).toMatchObject({ ok: false, sent: false });
    expect(calls).toBe(before);
  });

  it('a refused target re-reads the allowed origin once (ADR 0073): the recorded demo origin is then reached, nothing else is', async () => {
    const origin = `http://127.0.0.1:${port}`;
    let recorded: string | undefined;
    let reads = 0;
    // What the process serving the demo seller records, seen by this one only after a read.
    const stored: { origin?: string } = {};
    const refreshAllowOrigin = (): Promise<void> => {
      reads++;
      recorded = stored.origin;
      return Promise.resolve();
    };
    const opts = { allowPrivate: false, allowOrigin: (o: string) => o === recorded, refreshAllowOrigin };
    expect(await checkTarget(`${origin}/small`, opts)).toMatch(/loopback/);
    expect(reads).toBe(1);
    stored.origin = origin;
    const cases: Array<[string, RegExp | null, number]> = [
      // Refused once more, re-read, now allowed; then allowed from what was read, no read.
      [`${origin}/small`, null, 1],
      [`${origin}/big`, null, 0],
      // Another port, the same port by name: a read each, and still refused.
      [`http://127.0.0.1:${port + 1}/small`, /loopback/, 1],
      [`http://localhost:${port}/small`, /loopback/, 1],
    ];
    for (const [url, refused, readsMade] of cases) {
      const before = reads;
      const got = await checkTarget(url, opts);
      if (refused) expect(got, url).toMatch(refused);
      else expect(got, url).toBeNull();
      expect(reads - before, url).toBe(readsMade);
    }
    // The call itself uses what was read: no read per call.
    const ok = await forward(get('/small'), opts);
    expect(ok.ok && ok.body.toString()).toBe('small');
    // A read that fails leaves the refusal as it was.
    const failing = { allowPrivate: false, allowOrigin: () => false, refreshAllowOrigin: () => Promise.reject(new Error('database down')) };
    expect(await checkTarget(`${origin}/small`, failing)).toMatch(/loopback/);
  });

  it('a prepared call writes nothing until sent, and a cancelled one never reaches the seller (ADR 0062)', async () => {
    const before = calls;
    const idle = prepareCall(get('/small'), { allowPrivate: true });
    const dropped = prepareCall(get('/small'), { allowPrivate: true });
    // Several turns of the event loop: the connections are taken or opened, no request is written.
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 10));
    expect(calls).toBe(before);
    dropped.cancel();
    const ok = await idle.send();
    expect(ok.ok && ok.body.toString()).toBe('small');
    expect(calls).toBe(before + 1);
    expect(await dropped.send()).toEqual({ ok: false, sent: false, reason: 'cancelled before sending' });
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(before + 1);
  });

  it('a prepared call whose kept connection the seller closed meanwhile is made on a fresh one when sent; a cancelled one closes its connection (ADR 0062)', async () => {
    // A seller that closes an idle connection after 150 ms and sends no Keep-Alive hint, as many
    // servers that are not Node's do; it counts the requests and the connections it sees close.
    let requests = 0;
    let closed = 0;
    const sockets = new Set<net.Socket>();
    const seller = net.createServer((s) => {
      sockets.add(s);
      let idle: NodeJS.Timeout | undefined;
      const arm = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => s.end(), 150);
      };
      arm();
      s.on('data', (d) => {
        if (!d.toString().includes('\r\n\r\n')) return;
        requests++;
        s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        arm();
      });
      s.on('close', () => {
        clearTimeout(idle);
        closed++;
        sockets.delete(s);
      });
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => seller.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/x`;
    const req = { url, method: 'GET', headers: {}, body: null };
    try {
      expect((await forward(req, { allowPrivate: true })).ok).toBe(true);
      await new Promise((r) => setTimeout(r, 100));
      // Takes the kept connection; the seller closes it while the call waits to be sent.
      const call = prepareCall(req, { allowPrivate: true });
      await new Promise((r) => setTimeout(r, 150));
      const res = await call.send();
      expect(res.ok && res.body.toString()).toBe('ok');
      expect(requests).toBe(2);

      // A cancelled call gives its connection up: the seller sees it close well before its own
      // idle close, and no request on it.
      const openBefore = sockets.size;
      const dropped = prepareCall({ ...req, url: `${url}?new` }, { allowPrivate: true });
      await new Promise((r) => setTimeout(r, 20));
      const closedBefore = closed;
      dropped.cancel();
      for (let i = 0; i < 10 && closed === closedBefore; i++) await new Promise((r) => setTimeout(r, 5));
      expect(closed).toBeGreaterThan(closedBefore);
      expect(requests).toBe(2);
      expect(sockets.size).toBeLessThanOrEqual(openBefore);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => seller.close(() => r()));
    }
  });
});
