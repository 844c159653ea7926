/**
 * The widget origin matcher (issue 22 item 3): a concrete `postMessage` origin against an
 * allowed entry. Exact entries match exactly; a loopback `*` port matches any port of that
 * scheme and host, and only when wildcards are honoured (test mode).
 */
import { describe, expect, it } from 'vitest';
import { loopbackWildcard, originMatches } from './origin-pattern.ts';

const CASES: Array<[pattern: string, origin: string, test: boolean, live: boolean]> = [
  ['https://shop.example', 'https://shop.example', true, true],
  ['https://shop.example', 'https://shop.example:8443', false, false],
  ['https://shop.example', 'http://shop.example', false, false],
  ['http://127.0.0.1:*', 'http://127.0.0.1:5173', true, false],
  ['http://127.0.0.1:*', 'http://127.0.0.1', true, false],
  ['http://127.0.0.1:*', 'http://127.0.0.1:65535', true, false],
  ['http://localhost:*', 'http://localhost:3000', true, false],
  ['http://localhost:*', 'https://localhost:3000', false, false],
  ['http://localhost:*', 'http://127.0.0.1:3000', false, false],
  ['http://localhost:*', 'http://localhost.evil.example:3000', false, false],
  ['http://localhost:*', 'http://evil.localhost:3000', false, false],
  ['http://localhost:*', 'null', false, false],
  ['http://localhost:*', 'http://localhost:*', false, false],
  ['http://127.0.0.1:*', 'http://127.0.0.1:3000/', false, false],
  // Never honoured, even in test mode: not a loopback host.
  ['http://10.0.0.1:*', 'http://10.0.0.1:80', false, false],
  ['https://*.example', 'https://a.example', false, false],
  ['https://*.example', 'https://*.example', false, false],
];

describe('originMatches', () => {
  it.each(CASES)('%s vs %s: test %s, live %s', (pattern, origin, test, live) => {
    expect(originMatches(pattern, origin, { wildcards: true })).toBe(test);
    expect(originMatches(pattern, origin, { wildcards: false })).toBe(live);
  });
});

describe('loopbackWildcard', () => {
  it.each([
    ['http://127.0.0.1:*', { scheme: 'http', host: '127.0.0.1' }],
    ['HTTP://LocalHost:*/', { scheme: 'http', host: 'localhost' }],
    ['https://localhost:*', { scheme: 'https', host: 'localhost' }],
    ['http://10.0.0.1:*', null],
    ['http://[::1]:*', null],
    ['https://*.example', null],
    ['http://localhost:*/path', null],
    ['http://user@localhost:*', null],
    ['http://localhost', null],
  ])('%s → %j', (value, want) => {
    expect(loopbackWildcard(value)).toEqual(want);
  });
});
