import { describe, expect, it } from 'vitest';
import { displayPrefix, generateApiKey, hashApiKey, hashPassword, keyedId, parseApiKey, randomId, verifyPassword } from './secrets.ts';
import { parseStaticRates } from '../rates/rate-source.ts';

describe('merchant secrets', () => {
  it('keys: prefix + 32 base62 characters; parse tells kind and mode; anything else is undefined', () => {
    const k = generateApiKey('secret', 'live');
    expect(k).toMatch(/^ask_live_[A-Za-z0-9]{32}$/);
    expect(parseApiKey(k)).toEqual({ kind: 'secret', mode: 'live' });
    expect(parseApiKey(generateApiKey('publishable', 'test'))).toEqual({ kind: 'publishable', mode: 'test' });
    for (const bad of ['', 'ask_live_', `ask_prod_${'a'.repeat(32)}`, `ask_live_${'a'.repeat(31)}`, `ask_live_${'a'.repeat(31)}-`]) expect(parseApiKey(bad)).toBeUndefined();
    expect(displayPrefix(k)).toBe(k.slice(0, 13));
  });

  it('key hashes are keyed: same key and pepper, same hash; another pepper, another hash', () => {
    const k = generateApiKey('secret', 'test');
    const a = Buffer.from('pepper-a-0123456789');
    expect(hashApiKey(a, k)).toBe(hashApiKey(a, k));
    expect(hashApiKey(a, k)).not.toBe(hashApiKey(Buffer.from('pepper-b-0123456789'), k));
    expect(hashApiKey(a, k)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ids: random ids differ, keyed ids are stable per input and pepper', () => {
    expect(randomId('pay_')).toMatch(/^pay_[a-z2-7]{24}$/);
    expect(randomId('pay_')).not.toBe(randomId('pay_'));
    const p = Buffer.from('pepper');
    expect(keyedId('pay_', p, ['order', 'm', 'test', 'o-1'])).toBe(keyedId('pay_', p, ['order', 'm', 'test', 'o-1']));
    expect(keyedId('pay_', p, ['order', 'm', 'test', 'o-1'])).not.toBe(keyedId('pay_', p, ['order', 'm', 'live', 'o-1']));
    // JSON framing: no two different part lists collide by concatenation.
    expect(keyedId('pay_', p, ['a|b', 'c'])).not.toBe(keyedId('pay_', p, ['a', 'b|c']));
  });

  it('dashboard passwords: scrypt hashes verify the right password only', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('x', 'bcrypt$whatever')).toBe(false);
  });

  it('ANM_RATES: CODE=decimal pairs; a typo fails at startup', () => {
    expect([...parseStaticRates('USD=0.25, eur=0.23')]).toEqual([['USD', '0.25'], ['EUR', '0.23']]);
    for (const bad of ['USD', 'USD=abc', 'USD=0', 'DOLLAR=1', 'USD=-1']) expect(() => parseStaticRates(bad)).toThrow(/ANM_RATES/);
  });
});
