/**
 * The hosted checkout surfaces (issue 6): `/c/{id}` (page), `/c/{id}/events` (SSE),
 * `/widget.js` and `/assets/*`. Registered on the root by `buildApp`:
 * `await app.register(checkoutPages, opts)`.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../deps.ts';
import { trackSseStreams } from '../../runtime/ops/metrics.ts';
import assets from './assets.ts';
import { checkoutEvents } from './events.ts';
import { CheckoutHub } from './hub.ts';
import { checkoutPage } from './page.ts';

export default async function checkoutPages(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  // The browser bundle is built by esbuild on the first request that needs it (about a
  // second, once per process) and kept in memory: apps built only to test the API never pay it.
  await app.register(assets);
  // Own context: its HTML error handler applies to the page only.
  await app.register(async (pages) => checkoutPage(pages, d));
  if (d.feed) {
    const feed = d.feed;
    const hub = new CheckoutHub(feed, (id) => d.checkout.byId(id));
    const untrack = trackSseStreams('checkout', () => hub.streams);
    app.addHook('onClose', async () => untrack());
    await app.register(async (streams) => checkoutEvents(streams, d, hub));
  }
}
