/**
 * The seller's answer as a routed execution returns it (issue 21: "the seller's body passes
 * through byte for byte"; docs/marketplace.md: `body` is the exact text when it is UTF-8).
 */
import { describe, expect, it } from 'vitest';
import { executionResult } from './execution-answer.ts';

const answer = (body: Buffer) => ({ ok: true as const, status: 200, headers: { 'content-type': 'application/json' }, body });
const bytesOf = (r: ReturnType<typeof executionResult>) => Buffer.from(r.body, r.body_encoding === 'utf8' ? 'utf8' : 'base64');

describe('executionResult', () => {
  it('keeps a leading byte order mark: the text is every byte the seller sent', () => {
    const body = Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"ok":true}')]);
    const r = executionResult('pi_1', 'SETTLED', answer(body));
    expect(r.body_encoding).toBe('utf8');
    expect(r.body.codePointAt(0)).toBe(0xfeff);
    expect(bytesOf(r).equals(body)).toBe(true);
  });

  it('UTF-8 text as text, anything else as base64, each giving back the same bytes', () => {
    for (const body of [Buffer.from('héllo ✓'), Buffer.from([0xff, 0x00, 0xfe]), Buffer.alloc(0)]) {
      expect(bytesOf(executionResult('pi_1', 'SETTLED', answer(body))).equals(body)).toBe(true);
    }
    expect(executionResult('pi_1', 'SETTLED', answer(Buffer.from([0xff]))).body_encoding).toBe('base64');
  });
});
