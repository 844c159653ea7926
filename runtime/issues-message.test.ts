import { expect, it } from 'vitest';
import { z } from 'zod';
import { issueLine, issuesMessage } from './issues-message.ts';

it('writes each issue as path: message, the whole value named where the path is empty, joined by "; "', () => {
  const r = z.object({ a: z.object({ b: z.number() }), c: z.string() }).safeParse({ a: { b: 'x' } });
  expect(r.success).toBe(false);
  expect(issuesMessage(r.error!.issues)).toBe('a.b: Invalid input: expected number, received string; c: Invalid input: expected string, received undefined');
  const whole = z.number().safeParse('x');
  expect(issuesMessage(whole.error!.issues, 'result')).toBe('result: Invalid input: expected number, received string');
});

it('names a symbol or a number in a path as text rather than throwing', () => {
  expect(issueLine({ path: [Symbol('k'), 0, 'x'], message: 'bad' }, 'body')).toBe('Symbol(k).0.x: bad');
});
