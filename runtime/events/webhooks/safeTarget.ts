import { lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Addresses a webhook may not reach unless private targets are allowed (RFC 6890 special-purpose ranges). */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail included); undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const part = (side: string | undefined) => (side ? side.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const groups = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 ? groups : undefined;
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * IPv4 addresses an IPv6 address carries and reaches: IPv4-mapped (::ffff:0:0/96), SIIT
 * (::ffff:0:0:0/96), IPv4-compatible (::/96), 6to4 (2002::/16) and Teredo (2001::/32, its server
 * and its client, the latter stored inverted). A public-looking IPv6 address is only public when
 * these are too.
 */
function embeddedIpv4(groups: number[]): string[] {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  const zeroTo = (n: number) => groups.slice(0, n).every((group) => group === 0);
  if (zeroTo(5) && g5 === 0xffff) return [ipv4Of(g6, g7)];
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return [ipv4Of(g6, g7)];
  if (zeroTo(6)) return [ipv4Of(g6, g7)];
  if (g0 === 0x2002) return [ipv4Of(g1, g2)];
  if (g0 === 0x2001 && g1 === 0) return [ipv4Of(g2, g3), ipv4Of(g6 ^ 0xffff, g7 ^ 0xffff)];
  return [];
}

/**
 * Whether an IP address is on the public internet. An IPv6 address that carries an IPv4 one
 * (mapped, compatible, 6to4, Teredo) is public only when that one is; NAT64 prefixes are never.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4');
  const groups = ipv6Groups(address);
  if (!groups) return false;
  const embedded = embeddedIpv4(groups);
  // ::/96 holds :: and ::1, which the list below refuses; any other carried IPv4 decides alone.
  if (embedded.length > 0 && !(groups.slice(0, 7).every((group) => group === 0) && groups[7] <= 1))
    return embedded.every((ipv4) => isPublicAddress(ipv4));
  return !NOT_PUBLIC.check(address, 'ipv6');
}

/**
 * What is wrong with a webhook URL before any lookup: not http(s), credentials in it, or a host
 * that is a non-public address (literal or localhost) while private targets are not allowed.
 */
export function targetProblem(text: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not hold credentials (the signature authenticates deliveries)';
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (/^localhost$|\.localhost$/i.test(host) || (isIP(host) !== 0 && !isPublicAddress(host)))
    return 'names a loopback, private or link-local address; set webhooks.allowPrivateTargets to allow it';
  return undefined;
}

/**
 * A DNS lookup for outgoing requests that refuses names resolving to non-public addresses, at
 * connect time, so a name that changes its answer after the check (DNS rebinding) is caught too.
 */
export function publicOnlyLookup(): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      const refused = list.find((a) => !isPublicAddress(a.address));
      if (refused || list.length === 0) {
        const problem = new Error(`${hostname} resolves to a non-public address (${refused?.address ?? 'none'})`);
        return callback(Object.assign(problem, { code: 'ENOTPUBLIC' }), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
