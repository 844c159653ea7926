/**
 * `/healthz` on the marketplace port (DESIGN §6 "Observability"; docs/deploy.md: the load
 * balancer's health check, 503 for HTTP_DRAIN_MS on SIGTERM): the merchant port's route, so a
 * process with only the marketplace role answers its balancer the same way.
 */
import { describe, expect, it } from 'vitest';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { startMarketplace } from '../../gateway/market/server.ts';
import { DRAIN_MS, expectDrainOnClose, request } from '../conformance/harness.ts';
import { useMarket } from './harness.ts';

const h = useMarket();

describe('marketplace /healthz', () => {
  it('200 {status: ok} while the database answers; 503 when it does not', async () => {
    const ok = await h.req('GET', '/healthz');
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ status: 'ok' });
    const healthy = h.deps.dbHealthy;
    h.deps.dbHealthy = async () => false;
    try {
      // The route reads the deps it was registered with: a fresh app over the same services sees the outage.
      const app = await buildMarketApp(h.deps);
      const down = await app.inject({ method: 'GET', url: '/healthz' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toEqual({ status: 'database_unreachable' });
      await app.close();
    } finally {
      h.deps.dbHealthy = healthy;
    }
  });

  it('a marketplace-only process drains on close: 503 draining until the listener closes, paid routes still answered', async () => {
    const edge = await startMarketplace({ db: h.backend.db, host: h.host, listen: { host: '127.0.0.1', port: 0 }, drainMs: DRAIN_MS, watch: false });
    await expectDrainOnClose(edge, () => request(edge.url, 'POST', '/api/v1/route/quote', { body: { capability: 'nothing-listed', asset: 'USDC' } }), 404);
  });

  it('drain() then close(): the drain time runs from the first drain, waited once', async () => {
    const drainMs = 1_500;
    const edge = await startMarketplace({ db: h.backend.db, host: h.host, listen: { host: '127.0.0.1', port: 0 }, drainMs, watch: false });
    edge.drain();
    expect((await request(edge.url, 'GET', '/healthz')).status).toBe(503);
    await new Promise((r) => setTimeout(r, drainMs));
    const t0 = Date.now();
    await edge.close();
    // Waiting the drain again would take drainMs; stopping the market and the listener takes far less, even on a loaded machine.
    expect(Date.now() - t0).toBeLessThan(drainMs);
  });
});
