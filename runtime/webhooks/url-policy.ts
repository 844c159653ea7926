import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { withArticle } from '../../machines/kit/text.ts';
import { WebhookError } from './errors.ts';

/**
 * Webhook URL rules (DESIGN.md §4): http(s) only, and no target inside private, loopback,
 * link-local, unique-local, shared, multicast, reserved or cloud-metadata address space,
 * judged by ipaddr.js's special-purpose ranges: only its `unicast` class passes, after the
 * IPv4 address inside every embedding form (mapped, translated, compatible, NAT64, 6to4) has
 * been unwrapped and judged the same way; local-use NAT64, Teredo and the other IETF blocks
 * are refused whole, unless ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1 (development). Checked when the URL is set and
 * again on every connection (the guarded lookup), so DNS that later points a public name at
 * an internal address (rebinding) is refused too.
 */

// Embedding forms judged by the IPv4 address they carry; anything else must be global unicast.
const V6 = (cidr: string) => ipaddr.IPv6.parseCIDR(cidr);
const EMBEDS_V4: ReadonlyArray<{ net: [ipaddr.IPv6, number]; name: string; v4: (p: number[]) => [number, number] }> = [
  { net: V6('::ffff:0:0/96'), name: 'IPv4-mapped', v4: (p) => [p[6]!, p[7]!] },
  { net: V6('::ffff:0:0:0/96'), name: 'IPv4-translated', v4: (p) => [p[6]!, p[7]!] },
  { net: V6('64:ff9b::/96'), name: 'NAT64', v4: (p) => [p[6]!, p[7]!] },
  { net: V6('2002::/16'), name: '6to4', v4: (p) => [p[1]!, p[2]!] },
  // IPv4-compatible (deprecated): every address but :: and ::1, which are judged as IPv6.
  { net: V6('::/96'), name: 'IPv4-compatible', v4: (p) => [p[6]!, p[7]!] },
];
// Blocks ipaddr.js (2.5) still classes as unicast: the dummy prefix (RFC 9780).
const EXTRA_V6: ReadonlyArray<[ipaddr.IPv6, number]> = [V6('100:0:0:1::/64')];
// IPv6 global unicast is 2000::/3; the rest of the space is unassigned or special.
const GLOBAL_UNICAST = V6('2000::/3');

function v4Reason(v4: ipaddr.IPv4, shown: string): string | null {
  const range = v4.range();
  return range === 'unicast' ? null : `${shown} is ${withArticle(range)} address`;
}

/** Why this address may not receive webhooks, or null when it is a public unicast address. */
export function blockedReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return `not an IP address: ${ip}`;
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv4') return v4Reason(addr as ipaddr.IPv4, ip);
  const v6 = addr as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'loopback' || range === 'unspecified') return `${ip} is ${withArticle(range)} address`;
  for (const e of EMBEDS_V4) {
    if (!v6.match(e.net)) continue;
    const [hi, lo] = e.v4(v6.parts);
    const v4 = new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
    const why = v4Reason(v4, v4.toString());
    return why && `${ip} embeds ${v4.toString()} (${e.name}): ${why}`;
  }
  if (range !== 'unicast') return `${ip} is in a special-purpose block (${range})`;
  if (EXTRA_V6.some((net) => v6.match(net)) || !v6.match(GLOBAL_UNICAST)) return `${ip} is outside global unicast space`;
  return null;
}

/** Syntax rules only: absolute http(s), a host, no credentials, at most 2048 characters. */
export function parseWebhookUrl(raw: string): URL {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2048) throw new WebhookError('invalid_url', 'url must be an absolute http(s) URL of at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookError('invalid_url', 'url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookError('invalid_url', 'url must use http or https');
  if (!url.hostname) throw new WebhookError('invalid_url', 'url must name a host');
  // Credentials in the URL would end up in delivery logs and lists; put auth in the path instead.
  if (url.username || url.password) throw new WebhookError('invalid_url', 'url must not carry credentials');
  if (url.hash) throw new WebhookError('invalid_url', 'url must not carry a fragment');
  return url;
}

export type LookupAll = (host: string) => Promise<LookupAddress[]>;

const systemLookupAll: LookupAll = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))));

function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Full check for `set`: syntax, then every address the name resolves to must be public
 * (one private answer is enough to refuse: an attacker controls which one a client picks).
 */
export async function validateWebhookUrl(raw: string, opts: { allowPrivate: boolean; lookupAll?: LookupAll }): Promise<URL> {
  const url = parseWebhookUrl(raw);
  if (opts.allowPrivate) return url;
  const host = bareHost(url);
  let addrs: LookupAddress[];
  if (isIP(host)) addrs = [{ address: host, family: isIP(host) }];
  else {
    try {
      addrs = await (opts.lookupAll ?? systemLookupAll)(host);
    } catch {
      throw new WebhookError('url_unresolvable', `cannot resolve ${host}`);
    }
    if (addrs.length === 0) throw new WebhookError('url_unresolvable', `cannot resolve ${host}`);
  }
  for (const a of addrs) {
    const why = blockedReason(a.address);
    if (why) throw new WebhookError('url_not_allowed', `webhook URL refused: ${why}`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses blocked addresses at connect time. IP literals
 * never reach a lookup, so the sender checks those itself (`blockedReason`).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (host: string, options: LookupOptions, cb: LookupCallback): void => {
    dnsLookup(host, { ...options, all: true, verbatim: true }, (err, addrs) => {
      if (err) return cb(err, []);
      if (!allowPrivate) {
        for (const a of addrs) {
          const why = blockedReason(a.address);
          if (why) {
            const e: NodeJS.ErrnoException = new Error(`webhook target refused: ${why}`);
            e.code = 'EBLOCKEDADDRESS';
            return cb(e, []);
          }
        }
      }
      if (options.all) return cb(null, addrs);
      const first = addrs[0];
      if (!first) return cb(Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' }), []);
      cb(null, first.address, first.family);
    });
  };
}
