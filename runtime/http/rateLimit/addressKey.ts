import { isIPv6 } from 'node:net';

/**
 * The rate limiter's key for a client address. An IPv6 client usually holds a whole /64 (a home
 * or a cloud machine gets one), so counting per address would let it take a fresh one for every
 * request: its key is its /64. IPv4 addresses, IPv4 addresses mapped into IPv6 and anything
 * unreadable are counted as they are.
 */
export function addressKey(address: string): string {
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, each as four lower-case hex digits (a zone id dropped). */
function expandIPv6(address: string): string[] {
  const [bare] = address.toLowerCase().split('%');
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const front = groups(head);
  let back = groups(tail);
  // A trailing dotted IPv4 part is two groups.
  const last = back.at(-1) ?? front.at(-1);
  if (last?.includes('.')) {
    const bytes = last.split('.').map(Number);
    const pair = [((bytes[0] << 8) | bytes[1]).toString(16), ((bytes[2] << 8) | bytes[3]).toString(16)];
    if (back.length > 0) back = [...back.slice(0, -1), ...pair];
    else front.splice(-1, 1, ...pair);
  }
  const missing = tail === undefined ? 0 : 8 - front.length - back.length;
  return [...front, ...Array.from({ length: missing }, () => '0'), ...back].map((group) => group.padStart(4, '0'));
}
