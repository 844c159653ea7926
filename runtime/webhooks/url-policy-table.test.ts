/**
 * The webhook URL policy against the IANA special-purpose address registries (IPv6 and IPv4)
 * and every IPv4-embedding form: each row is refused without ANMPAY_ALLOW_PRIVATE_WEBHOOKS, as
 * an address and as a URL literal. Public addresses, bare or embedded, still pass.
 */
import { describe, expect, it } from 'vitest';
import { blockedReason, validateWebhookUrl } from './url-policy.ts';

// [address, what it is]: one address inside each block of the IANA IPv6 Special-Purpose
// Address Registry, plus multicast and deprecated site-local.
const IANA_V6: Array<[string, string]> = [
  ['::1', '::1/128 loopback'],
  ['::', '::/128 unspecified'],
  ['::ffff:a00:1', '::ffff:0:0/96 IPv4-mapped (10.0.0.1)'],
  ['64:ff9b::a9fe:a9fe', '64:ff9b::/96 NAT64 well-known prefix (169.254.169.254)'],
  ['64:ff9b:1::7f00:1', '64:ff9b:1::/48 local-use NAT64'],
  ['64:ff9b:1:ffff::808:808', '64:ff9b:1::/48 local-use NAT64, public payload'],
  ['100::1', '100::/64 discard-only'],
  ['100:0:0:1::1', '100:0:0:1::/64 dummy prefix'],
  ['2001:1ff::1', '2001::/23 IETF protocol assignments'],
  ['2001::1', '2001::/32 Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32 Teredo (public server)'],
  ['2001:1::1', '2001:1::1/128 port control protocol anycast'],
  ['2001:1::2', '2001:1::2/128 TURN anycast'],
  ['2001:1::3', '2001:1::3/128 DNS-SD SRP anycast'],
  ['2001:2::1', '2001:2::/48 benchmarking'],
  ['2001:3::1', '2001:3::/32 AMT'],
  ['2001:4:112::1', '2001:4:112::/48 AS112-v6'],
  ['2001:10::1', '2001:10::/28 ORCHID (deprecated)'],
  ['2001:20::1', '2001:20::/28 ORCHIDv2'],
  ['2001:30::1', '2001:30::/28 drone remote ID'],
  ['2001:db8::1', '2001:db8::/32 documentation'],
  ['2002:a9fe:a9fe::1', '2002::/16 6to4 (169.254.169.254)'],
  ['2620:4f:8000::1', '2620:4f:8000::/48 direct delegation AS112'],
  ['3fff::1', '3fff::/20 documentation'],
  ['3fff:fff::1', '3fff::/20 documentation, last /32'],
  ['5f00::1', '5f00::/16 segment routing (SRv6) SIDs'],
  ['fc00::1', 'fc00::/7 unique-local'],
  ['fd00:ec2::254', 'fc00::/7 unique-local (AWS metadata)'],
  ['fe80::1', 'fe80::/10 link-local'],
  ['fec0::1', 'fec0::/10 site-local (deprecated)'],
  ['ff02::1', 'ff00::/8 multicast'],
  ['4000::1', 'outside 2000::/3 global unicast'],
];

// The forms of issue 26 that were accepted before, and more of each embedding form.
const EMBEDDING: Array<[string, string]> = [
  ['::a9fe:a9fe', 'IPv4-compatible 169.254.169.254'],
  ['::a00:1', 'IPv4-compatible 10.0.0.1'],
  ['::127.0.0.1', 'IPv4-compatible, dotted'],
  ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
  ['::ffff:0:7f00:1', 'IPv4-translated 127.0.0.1'],
  ['::ffff:0:a9fe:a9fe', 'IPv4-translated 169.254.169.254'],
  ['::ffff:7f00:1', 'IPv4-mapped 127.0.0.1'],
  ['::ffff:192.168.0.1', 'IPv4-mapped, dotted'],
  ['64:ff9b::7f00:1', 'NAT64 127.0.0.1'],
  ['64:ff9b::c0a8:1', 'NAT64 192.168.0.1'],
  ['2002:7f00:1::', '6to4 127.0.0.1'],
  ['2002:a00:1:1::1', '6to4 10.0.0.1'],
  ['2002:6440:1::1', '6to4 100.64.0.1 (shared)'],
];

// IPv4 Special-Purpose Address Registry (one address per block) and broadcast.
const IANA_V4: Array<[string, string]> = [
  ['0.1.2.3', '0.0.0.0/8 this network'],
  ['10.1.2.3', '10.0.0.0/8 private'],
  ['100.64.0.1', '100.64.0.0/10 shared'],
  ['127.0.0.1', '127.0.0.0/8 loopback'],
  ['169.254.169.254', '169.254.0.0/16 link-local (metadata)'],
  ['172.16.0.1', '172.16.0.0/12 private'],
  ['192.0.0.8', '192.0.0.0/24 IETF protocol assignments'],
  ['192.0.0.192', '192.0.0.0/24 (Oracle metadata)'],
  ['192.0.2.1', '192.0.2.0/24 documentation'],
  ['192.31.196.1', '192.31.196.0/24 AS112-v4'],
  ['192.52.193.1', '192.52.193.0/24 AMT'],
  ['192.88.99.1', '192.88.99.0/24 6to4 relay anycast (deprecated)'],
  ['192.168.1.1', '192.168.0.0/16 private'],
  ['192.175.48.1', '192.175.48.0/24 direct delegation AS112'],
  ['198.18.0.1', '198.18.0.0/15 benchmarking'],
  ['198.51.100.1', '198.51.100.0/24 documentation'],
  ['203.0.113.1', '203.0.113.0/24 documentation'],
  ['224.0.0.1', '224.0.0.0/4 multicast'],
  ['240.0.0.1', '240.0.0.0/4 reserved'],
  ['255.255.255.255', 'limited broadcast'],
];

const PUBLIC = ['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '::ffff:0:808:808'];

const literal = (ip: string) => (ip.includes(':') ? `https://[${ip}]/hooks` : `https://${ip}/hooks`);

describe('webhook URL policy: special-purpose address table (issue 26, DESIGN.md §4)', () => {
  it.each([...IANA_V6, ...EMBEDDING, ...IANA_V4])('refuses %s (%s)', async (ip) => {
    expect(blockedReason(ip)).not.toBeNull();
    await expect(validateWebhookUrl(literal(ip), { allowPrivate: false })).rejects.toMatchObject({ code: 'url_not_allowed' });
    // And behind a name that resolves to it (the check made when an endpoint is set).
    await expect(validateWebhookUrl('https://hooks.example/h', { allowPrivate: false, lookupAll: async () => [{ address: ip, family: ip.includes(':') ? 6 : 4 }] })).rejects.toMatchObject({
      code: 'url_not_allowed',
    });
  });

  it.each(PUBLIC)('accepts public %s, bare or embedded', async (ip) => {
    expect(blockedReason(ip)).toBeNull();
    await expect(validateWebhookUrl(literal(ip), { allowPrivate: false })).resolves.toBeInstanceOf(URL);
  });

  it('allows every row with ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1', async () => {
    for (const [ip] of [...IANA_V6, ...EMBEDDING, ...IANA_V4]) {
      await expect(validateWebhookUrl(literal(ip), { allowPrivate: true }), ip).resolves.toBeInstanceOf(URL);
    }
  });
});
