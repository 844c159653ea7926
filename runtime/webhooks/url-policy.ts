import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { WebhookError } from './errors.ts';

/**
 * Webhook URL rules (DESIGN.md §4): http(s) only, and no target inside private, loopback,
 * link-local, unique-local, shared, multicast, reserved or cloud-metadata address space,
 * unless ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1 (development). Checked when the URL is set and
 * again on every connection (the guarded lookup), so DNS that later points a public name at
 * an internal address (rebinding) is refused too.
 */

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, includes 169.254.169.254 (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments (includes 192.0.0.192 Oracle metadata)
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes 255.255.255.255
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, includes fd00:ec2::254 (AWS metadata over IPv6)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** IPv4 embedded in NAT64 (64:ff9b::/96) or 6to4 (2002::/16) addresses, checked as IPv4. */
function embeddedIpv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  const groups = expandIpv6(lower);
  if (!groups) return null;
  const toV4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) return toV4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return toV4(groups[1]!, groups[2]!);
  return null;
}

function expandIpv6(ip: string): number[] | null {
  let s = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const p = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + `${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const missing = 8 - h.length - t.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  const all = [...h, ...Array<string>(missing).fill('0'), ...t].map((g) => parseInt(g || '0', 16));
  return all.length === 8 && all.every((n) => Number.isInteger(n) && n >= 0 && n <= 0xffff) ? all : null;
}

/** Why this address may not receive webhooks, or null when it is a public unicast address. */
export function blockedReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return `not an IP address: ${ip}`;
  if (family === 4) return blocked.check(ip, 'ipv4') ? `${ip} is a private, loopback, link-local or reserved address` : null;
  if (blocked.check(ip, 'ipv6')) return `${ip} is a private, loopback, link-local or reserved address`;
  const v4 = embeddedIpv4(ip);
  if (v4 && blocked.check(v4, 'ipv4')) return `${ip} embeds ${v4}, a private or reserved address`;
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
