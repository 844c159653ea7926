import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhooksPlugin } from '../../gateway/webhooks-plugin.ts';
import { openEmbedded, waitFor, type Backend } from '../helpers/backends.ts';
import { startStack, waitForStatus, type Stack } from './harness.ts';
import { Receiver } from './receiver.ts';

const TOKEN = 'opt_test_operator_token_0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const base = (m: string) => `/ops/api/merchants/${m}/webhooks`;

async function appWith(b: Backend, allowPrivateWebhooks: boolean, onRedeliver?: () => void): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(webhooksPlugin, { db: b.db, operatorToken: TOKEN, allowPrivateWebhooks, ...(onRedeliver ? { onRedeliver } : {}) });
  await app.ready();
  return app;
}

describe('webhooks operator API (gateway/webhooks-plugin.ts) and `anmpay webhook`', () => {
  let b: Backend;
  let app: FastifyInstance;
  let stack: Stack;
  let rx: Receiver;
  beforeAll(async () => {
    b = await openEmbedded();
    stack = await startStack(b);
    app = await appWith(b, true, () => stack.webhooks.worker.nudge());
    rx = await Receiver.start();
  });
  afterAll(async () => {
    await app.close();
    await stack.stop();
    await rx.close();
    await b.close();
  });

  it('requires the operator token, answering with the spec error envelope', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: TOKEN }]) {
      const res = await app.inject({ method: 'GET', url: base('m_1'), headers });
      expect(res.statusCode).toBe(401);
      const { error } = res.json<{ error: Record<string, unknown> }>();
      expect(Object.keys(error).sort()).toEqual(['code', 'message', 'request_id', 'type']);
      expect(error).toMatchObject({ type: 'invalid_request', code: 'unauthorized' });
      expect(typeof error.request_id).toBe('string');
    }
  });

  it('set creates the endpoint and shows the secret once; set again changes the URL only; rotate shows the new one; list shows none', async () => {
    const created = await app.inject({ method: 'POST', url: base('m_1'), headers: auth, payload: { mode: 'test', url: rx.url } });
    expect(created.statusCode).toBe(201);
    const c = created.json<{ endpoint_id: string; url: string; secret: string }>();
    expect(c.endpoint_id).toMatch(/^we_[0-9a-f]{24}$/);
    expect(c.url).toBe(rx.url);
    expect(c.secret).toMatch(/^whsec_/);

    const moved = await app.inject({ method: 'POST', url: base('m_1'), headers: auth, payload: { mode: 'test', url: `${rx.url}/v2` } });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ endpoint_id: c.endpoint_id, url: `${rx.url}/v2`, secret: null });

    const rotated = await app.inject({ method: 'POST', url: `${base('m_1')}/rotate`, headers: auth, payload: { mode: 'test', grace_seconds: 3600 } });
    expect(rotated.statusCode).toBe(200);
    const r = rotated.json<{ secret: string; previous_secrets_expire_at: string }>();
    expect(r.secret).toMatch(/^whsec_/);
    expect(r.secret).not.toBe(c.secret);
    expect(Date.parse(r.previous_secrets_expire_at) - Date.now()).toBeGreaterThan(3_500_000);

    const list = await app.inject({ method: 'GET', url: base('m_1'), headers: auth });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(c.secret);
    expect(list.body).not.toContain(r.secret);
    expect(list.body).not.toContain('whsec_');
    const data = list.json<{ data: Array<{ endpoint_id: string; mode: string; status: string; secrets: unknown[] }> }>().data;
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({ endpoint_id: c.endpoint_id, mode: 'test', status: 'active' });
    expect(data[0]!.secrets).toHaveLength(2);
  });

  it('refuses bad input with 4xx codes', async () => {
    const post = (url: string, payload: unknown, a = app) => a.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: payload as string });
    expect((await post(base('m_2'), { mode: 'prod', url: rx.url })).json()).toMatchObject({ error: { code: 'invalid_body' } });
    expect((await post(base('m_2'), { mode: 'test', url: 'ftp://x.example/' })).json()).toMatchObject({ error: { code: 'invalid_url' } });
    expect((await post(base('m_2'), '{"mode":')).json()).toMatchObject({ error: { code: 'invalid_json' } });
    expect((await post(`${base('m_2')}/rotate`, { mode: 'live' })).statusCode).toBe(404);
    const strict = await appWith(b, false);
    try {
      const res = await post(base('m_2'), { mode: 'test', url: rx.url }, strict);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: 'url_not_allowed' } });
      expect((await post(base('m_2'), { mode: 'test', url: 'http://169.254.169.254/latest' }, strict)).json()).toMatchObject({ error: { code: 'url_not_allowed' } });
    } finally {
      await strict.close();
    }
  });

  it('lists deliveries and attempts, redelivers on demand, and hides other merchants\' deliveries', async () => {
    await app.inject({ method: 'POST', url: base('m_3'), headers: auth, payload: { mode: 'test', url: rx.url } });
    const [eventId] = await stack.order('m_3', 'o1');
    await waitForStatus(b, 'm_3', { succeeded: 1 });
    const list = (await app.inject({ method: 'GET', url: `${base('m_3')}/deliveries?mode=test&status=succeeded&limit=5`, headers: auth })).json<{ object: string; has_more: boolean; data: Array<{ id: string; event_id: string }> }>();
    expect(list).toMatchObject({ object: 'list', has_more: false });
    expect(list.data.map((d) => d.event_id)).toEqual([eventId]);
    const id = list.data[0]!.id;
    const one = (await app.inject({ method: 'GET', url: `${base('m_3')}/deliveries/${id}`, headers: auth })).json<{ status: string; event_type: string; attempt_log: unknown[] }>();
    expect(one).toMatchObject({ status: 'succeeded', event_type: 'order.created', attempts: 1 });
    expect(one.attempt_log).toHaveLength(1);
    expect(one.attempt_log[0]).toMatchObject({ attempt: 1, status: 200, manual: false, response: 'ok', error: null });
    const [first] = one.attempt_log as Array<{ latency_ms: unknown; timestamp: unknown }>;
    expect([typeof first!.latency_ms, typeof first!.timestamp]).toEqual(['number', 'number']);

    const redo = await app.inject({ method: 'POST', url: `${base('m_3')}/deliveries/${id}/redeliver`, headers: auth });
    expect(redo.statusCode).toBe(202);
    await waitFor(async () => {
      const a = (await app.inject({ method: 'GET', url: `${base('m_3')}/deliveries/${id}/attempts`, headers: auth })).json<{ data: Array<{ manual: boolean; status: number }> }>();
      return a.data.length === 2 && a.data[1]!.manual && a.data[1]!.status === 200;
    }, 10_000, 'manual attempt');
    expect(rx.received.filter((r) => r.eventId === eventId)).toHaveLength(2);

    for (const url of [`${base('m_other')}/deliveries/${id}`, `${base('m_other')}/deliveries/${id}/attempts`]) {
      expect((await app.inject({ method: 'GET', url, headers: auth })).statusCode).toBe(404);
    }
    expect((await app.inject({ method: 'POST', url: `${base('m_other')}/deliveries/${id}/redeliver`, headers: auth })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: `${base('m_3')}/deliveries?status=weird`, headers: auth })).json()).toMatchObject({ error: { code: 'invalid_body' } });
  });

  it('`anmpay webhook set|rotate|list --json` drives the same API over HTTP', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const env = { ...process.env, ANMPAY_URL: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, ANMPAY_OPERATOR_TOKEN: TOKEN };
    const cli = async (args: string[], e: NodeJS.ProcessEnv = env) => {
      try {
        const { stdout } = await promisify(execFile)(process.execPath, ['bin/anmpay.js', 'webhook', ...args], { env: e });
        return { code: 0, out: stdout };
      } catch (err) {
        const x = err as { code: number; stdout: string };
        return { code: x.code, out: x.stdout };
      }
    };
    const set = await cli(['set', '--merchant', 'm_cli', '--mode', 'live', '--url', rx.url, '--json']);
    expect(set.code).toBe(0);
    const s = JSON.parse(set.out) as Record<string, string>;
    expect(Object.keys(s)).toEqual(['endpoint_id', 'url', 'secret']);
    expect(s.secret).toMatch(/^whsec_/);
    const rot = await cli(['rotate', '--merchant', 'm_cli', '--mode', 'live', '--json']);
    const r = JSON.parse(rot.out) as Record<string, string>;
    expect(Object.keys(r)).toEqual(['endpoint_id', 'url', 'secret']);
    expect(r).toMatchObject({ endpoint_id: s.endpoint_id, url: rx.url });
    expect(r.secret).not.toBe(s.secret);
    const list = await cli(['list', '--merchant', 'm_cli', '--json']);
    expect(list.out).not.toContain('whsec_');
    expect((JSON.parse(list.out) as { data: Array<{ secrets: unknown[] }> }).data[0]!.secrets).toHaveLength(2);
    // Usage errors exit 2; a refused token exits 1 with the service's code.
    expect((await cli(['set', '--merchant', 'm_cli', '--url', rx.url, '--json'])).code).toBe(2);
    const denied = await cli(['list', '--merchant', 'm_cli', '--json'], { ...env, ANMPAY_OPERATOR_TOKEN: 'opt_wrong_token_000000000000' });
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.out)).toMatchObject({ error: { code: 'unauthorized' } });
  });
});
