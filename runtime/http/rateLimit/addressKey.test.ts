import { describe, expect, it } from 'vitest';
import { addressKey } from './addressKey.js';

describe('addressKey', () => {
  it('counts an IPv6 client by its /64, however it spells the address', () => {
    const key = '2001:0db8:0001:0002::/64';
    for (const address of [
      '2001:db8:1:2::1',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:DB8:1:2:0:0:0:9',
      '2001:db8:1:2::a%eth0',
      '2001:db8:1:2::1.2.3.4',
    ])
      expect(addressKey(address)).toBe(key);
    expect(addressKey('2001:db8:1:3::1')).not.toBe(key);
    expect(addressKey('::1')).toBe('0000:0000:0000:0000::/64');
    expect(addressKey('fe80::1')).toBe('fe80:0000:0000:0000::/64');
  });

  it('counts IPv4 (mapped or not) and anything unreadable as it is', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('unknown')).toBe('unknown');
  });
});
