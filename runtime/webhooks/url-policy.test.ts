import { describe, expect, it } from 'vitest';
import { blockedReason, parseWebhookUrl, validateWebhookUrl } from './url-policy.ts';

const resolveTo = (...addresses: string[]) => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('webhook URL policy (DESIGN.md §4)', () => {
  it('accepts only absolute http(s) URLs without credentials or fragment', () => {
    expect(parseWebhookUrl('https://shop.example/hooks?x=1').toString()).toBe('https://shop.example/hooks?x=1');
    for (const bad of ['ftp://shop.example/', 'javascript:alert(1)', 'file:///etc/passwd', '/relative', 'https://user:pw@shop.example/', 'https://shop.example/#frag', '', `https://a.example/${'x'.repeat(2048)}`]) {
      expect(() => parseWebhookUrl(bad), bad).toThrow(expect.objectContaining({ code: 'invalid_url' }));
    }
  });

  it('refuses private, loopback, link-local, unique-local, metadata and reserved addresses', () => {
    for (const ip of [
      '127.0.0.1', '127.1.2.3', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '192.0.0.192', '198.18.0.1',
      '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254',
      '64:ff9b::a9fe:a9fe', '2002:c0a8:0101::1',
    ]) {
      expect(blockedReason(ip), ip).not.toBeNull();
    }
    for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '64:ff9b::808:808', '::ffff:8.8.8.8']) {
      expect(blockedReason(ip), ip).toBeNull();
    }
  });

  it.each([
    ['::', ':: is an unspecified address'],
    ['0.0.0.0', '0.0.0.0 is an unspecified address'],
    ['::1', '::1 is a loopback address'],
    ['10.0.0.1', '10.0.0.1 is a private address'],
  ])('the reason for %s reads "%s" (its article follows the range name)', (ip, reason) => {
    expect(blockedReason(ip)).toBe(reason);
  });

  it('resolves the host and refuses it when any address is internal', async () => {
    const opts = (lookupAll: () => Promise<Array<{ address: string; family: number }>>) => ({ allowPrivate: false, lookupAll });
    await expect(validateWebhookUrl('https://shop.example/h', opts(resolveTo('93.184.216.34')))).resolves.toBeInstanceOf(URL);
    await expect(validateWebhookUrl('https://shop.example/h', opts(resolveTo('93.184.216.34', '10.1.2.3')))).rejects.toMatchObject({ code: 'url_not_allowed' });
    await expect(validateWebhookUrl('https://metadata.example/h', opts(resolveTo('169.254.169.254')))).rejects.toMatchObject({ code: 'url_not_allowed' });
    await expect(validateWebhookUrl('https://nx.example/h', opts(async () => Promise.reject(new Error('ENOTFOUND'))))).rejects.toMatchObject({ code: 'url_unresolvable' });
    // IP literals, including the encodings URL parsing normalises.
    for (const u of ['http://127.0.0.1:8080/', 'http://[::1]/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/latest/meta-data']) {
      await expect(validateWebhookUrl(u, { allowPrivate: false }), u).rejects.toMatchObject({ code: 'url_not_allowed' });
    }
    await expect(validateWebhookUrl('http://localhost/h', { allowPrivate: false })).rejects.toMatchObject({ code: 'url_not_allowed' });
  });

  it('allows private targets with ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1 (development), still http(s) only', async () => {
    await expect(validateWebhookUrl('http://127.0.0.1:4000/hooks', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
    await expect(validateWebhookUrl('ftp://127.0.0.1/', { allowPrivate: true })).rejects.toMatchObject({ code: 'invalid_url' });
  });
});
