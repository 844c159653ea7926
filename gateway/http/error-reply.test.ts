/**
 * How a 5xx is logged: a refusal the service chose because of the outside world (a seller it
 * cannot reach, a ledger that is down) is a warning with its code and no stack; anything
 * unexpected is an error with the stack. Both answer the same envelope.
 */
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { MarketRefusal } from '../../runtime/market/errors.ts';
import { AppError } from '../errors.ts';
import { errorOptions, sendError } from './error-reply.ts';

async function logged(thrown: () => unknown): Promise<{ status: number; code: string; lines: Array<{ level: number; msg: string; err?: { stack?: string }; code?: string }> }> {
  const lines: Array<{ level: number; msg: string; err?: { stack?: string }; code?: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as (typeof lines)[number]);
      done();
    },
  });
  const app = Fastify({ ...errorOptions(), logger: { level: 'info', stream } });
  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  app.get('/x', () => {
    throw thrown();
  });
  const res = await app.inject({ method: 'GET', url: '/x' });
  await app.close();
  return { status: res.statusCode, code: res.json<{ error: { code: string } }>().error.code, lines: lines.filter((l) => l.level >= 40) };
}

describe('5xx logging', () => {
  it.each([
    ['a seller the marketplace cannot reach (MarketRefusal)', () => new MarketRefusal('seller_unreachable', 'loopback'), 502, 'seller_unreachable'],
    ['a ledger that is down (AppError)', () => new AppError('ledger_unavailable'), 503, 'ledger_unavailable'],
  ])('%s: a warning with its code, no stack', async (_name, make, status, code) => {
    const r = await logged(make);
    expect([r.status, r.code]).toEqual([status, code]);
    expect(r.lines.map((l) => [l.level, l.msg, l.code, l.err])).toEqual([[40, 'request refused upstream', code, undefined]]);
  });

  it('an unexpected error: an error with its stack, answered 500 internal_error', async () => {
    const r = await logged(() => new TypeError('boom'));
    expect([r.status, r.code]).toEqual([500, 'internal_error']);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatchObject({ level: 50, msg: 'request failed' });
    expect(r.lines[0]!.err?.stack).toContain('TypeError: boom');
  });
});
