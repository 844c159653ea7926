import { describe, expect, it } from 'vitest';
import { ApiKeyHashes, hashApiKey } from './secrets.ts';

describe('ApiKeyHashes', () => {
  const pepper = Buffer.from('pepper-for-the-test-0123456789', 'utf8');

  it('gives what hashApiKey gives, cached or not', () => {
    const h = new ApiKeyHashes(pepper, 2);
    for (const key of ['ask_test_a', 'ask_test_b', 'ask_test_a', 'ask_test_c', 'ask_test_a', 'ask_test_b']) {
      expect(h.hash(key)).toBe(hashApiKey(pepper, key));
    }
  });

  it('keeps at most `max` keys, dropping the oldest first', () => {
    const h = new ApiKeyHashes(pepper, 3);
    const cache = (h as unknown as { cache: Map<string, string> }).cache;
    for (let i = 0; i < 10; i++) h.hash(`ask_test_${i}`);
    expect([...cache.keys()]).toEqual(['ask_test_7', 'ask_test_8', 'ask_test_9']);
  });
});
