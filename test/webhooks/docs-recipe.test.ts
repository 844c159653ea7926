import { readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redeliver } from '../../runtime/webhooks/deliveries.ts';
import { openEmbedded, waitFor, type Backend } from '../helpers/backends.ts';
import { endpointFor, startStack, waitForStatus, type Stack } from './harness.ts';
import { Receiver } from './receiver.ts';

/**
 * docs/webhooks.md "Verifying a delivery": the code block between the verify-recipe markers is
 * extracted as it is published and run here as a merchant would run it, against real
 * deliveries from the runtime.
 */
interface Recipe {
  verifyWebhook(rawBody: Buffer, headers: IncomingHttpHeaders, secret: string, nowSeconds?: number): { id: string; type: string };
  webhookHandler(o: { secret: string; processed: { has(id: string): boolean; add(id: string): unknown }; onEvent(e: { id: string }): Promise<void> }): http.RequestListener;
}

async function loadRecipe(): Promise<{ recipe: Recipe; cleanup: () => Promise<void> }> {
  const md = await readFile(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const m = /<!-- verify-recipe:start -->\s*```js\n([\s\S]*?)```\s*<!-- verify-recipe:end -->/.exec(md);
  if (!m) throw new Error('recipe block not found in docs/webhooks.md');
  const dir = await mkdtemp(path.join(tmpdir(), 'anmpay-recipe-'));
  const file = path.join(dir, 'verify-webhook.mjs');
  await writeFile(file, m[1]!);
  const recipe = (await import(pathToFileURL(file).href)) as Recipe;
  return { recipe, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

describe('docs/webhooks.md verification recipe', () => {
  let b: Backend;
  let stack: Stack;
  let recipe: Recipe;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ recipe, cleanup } = await loadRecipe());
    b = await openEmbedded();
    stack = await startStack(b);
  });
  afterAll(async () => {
    await stack.stop();
    await b.close();
    await cleanup();
  });

  it('accepts real deliveries and refuses tampered, wrongly signed, stale and re-serialised ones', async () => {
    const rx = await Receiver.start();
    try {
      const ep = await endpointFor(b, 'm_doc', rx.url);
      await stack.order('m_doc', 'd1', 2);
      await waitFor(async () => rx.received.length >= 3, 10_000, 'deliveries');
      for (const r of rx.received) expect(recipe.verifyWebhook(r.rawBody, r.headers, ep.secret).id).toBe(r.eventId);
      const r = rx.received[0]!;
      const ts = Number(r.timestamp);
      expect(() => recipe.verifyWebhook(Buffer.from(r.rawBody.toString().replace('order', 'ordex')), r.headers, ep.secret)).toThrow(/signature/);
      expect(() => recipe.verifyWebhook(r.rawBody, r.headers, 'whsec_wrong')).toThrow(/signature/);
      expect(() => recipe.verifyWebhook(r.rawBody, r.headers, ep.secret, ts + 301)).toThrow(/300 s window/);
      expect(() => recipe.verifyWebhook(r.rawBody, r.headers, ep.secret, ts - 301)).toThrow(/300 s window/);
      expect(() => recipe.verifyWebhook(Buffer.from(JSON.stringify(JSON.parse(r.rawBody.toString()), null, 1)), r.headers, ep.secret)).toThrow(/signature/);
      expect(() => recipe.verifyWebhook(r.rawBody, { ...r.headers, 'service-signature': 'v1=zz' }, ep.secret)).toThrow(/signature/);
    } finally {
      await rx.close();
    }
  });

  it('its handler answers 2xx and deduplicates on the event id when a delivery comes twice', async () => {
    const handled: string[] = [];
    let secret = '';
    const processed = new Set<string>();
    // The secret is known only once the endpoint exists, after the server has a port.
    const server = http.createServer((req, res) => recipe.webhookHandler({ secret, processed, onEvent: async (e) => void handled.push(e.id) })(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      secret = (await endpointFor(b, 'm_dup', url)).secret;
      const [id] = await stack.order('m_dup', 'x1');
      await waitForStatus(b, 'm_dup', { succeeded: 1 });
      const { rows } = await b.db.query<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE merchant = 'm_dup'`);
      await redeliver(b.db, 'm_dup', rows[0]!.id);
      stack.webhooks.worker.nudge();
      await waitFor(async () => (await b.db.query(`SELECT 1 FROM webhook_attempts WHERE delivery = $1 AND status = 200`, [rows[0]!.id])).rowCount === 2, 10_000, 'redelivery');
      expect(handled).toEqual([id]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
