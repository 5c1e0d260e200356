import { BlockList, isIP, isIPv4 } from 'node:net';

/**
 * Which network addresses the service may connect to when it fetches an identity provider's
 * discovery document or key set. An organization admin chooses those URLs, so without this
 * rule the service could be made to request its own cloud metadata endpoint or anything on
 * its private network (server-side request forgery).
 */

/** Why an address is refused; null when it may be used. */
export type RefusedAddressKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'shared address space'
  | 'multicast'
  | 'reserved'
  | 'documentation'
  | 'not an IP address';

const IPV4_RANGES: ReadonlyArray<[string, number, RefusedAddressKind]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space'],
  ['127.0.0.0', 8, 'loopback'],
  // Cloud metadata endpoints (169.254.169.254, 169.254.170.2) live here.
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const IPV6_RANGES: ReadonlyArray<[string, number, RefusedAddressKind]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  // IPv4-compatible addresses (deprecated) and the discard prefix.
  ['::', 96, 'reserved'],
  ['100::', 64, 'reserved'],
  // Local-use NAT64 prefix (RFC 8215): the IPv4 address it maps to is chosen by the operator.
  ['64:ff9b:1::', 48, 'reserved'],
  // IETF protocol assignments, Teredo among them.
  ['2001::', 23, 'reserved'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
];

function buildLists(): Map<RefusedAddressKind, BlockList> {
  const lists = new Map<RefusedAddressKind, BlockList>();
  const add = (address: string, prefix: number, kind: RefusedAddressKind, type: 'ipv4' | 'ipv6') => {
    let list = lists.get(kind);
    if (!list) lists.set(kind, (list = new BlockList()));
    list.addSubnet(address, prefix, type);
  };
  for (const [address, prefix, kind] of IPV4_RANGES) add(address, prefix, kind, 'ipv4');
  for (const [address, prefix, kind] of IPV6_RANGES) add(address, prefix, kind, 'ipv6');
  return lists;
}

const LISTS = buildLists();

/**
 * Classifies an IP address. IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are judged as the
 * IPv4 address they carry (Node's BlockList does this for IPv4 rules), and so are the IPv4
 * addresses embedded in 6to4 (`2002::/16`) and well-known NAT64 (`64:ff9b::/96`) addresses,
 * which a host translates back into a connection to that IPv4 address.
 */
export function refusedAddressKind(address: string, options: { allowLoopback: boolean }): RefusedAddressKind | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const embedded = family === 6 ? embeddedIpv4(address) : null;
  if (embedded) return refusedAddressKind(embedded, options);
  for (const [kind, list] of LISTS) {
    if (!list.check(address, type)) continue;
    if (kind === 'loopback' && options.allowLoopback) return null;
    return kind;
  }
  return null;
}

/** The IPv4 address inside a 6to4 or NAT64 address, or null. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const fromGroups = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  if (groups[0] === 0x2002) return fromGroups(groups[1]!, groups[2]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) {
    return fromGroups(groups[6]!, groups[7]!);
  }
  return null;
}

/** Eight 16-bit groups of an IPv6 address (with `::` and a trailing dotted quad expanded). */
function expandIpv6(address: string): number[] | null {
  let text = address.split('%')[0]!.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (isIPv4(tail)) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const headGroups = parse(head);
  const restGroups = rest === undefined ? [] : parse(rest);
  const missing = 8 - headGroups.length - restGroups.length;
  if (missing < 0 || (rest === undefined && missing !== 0)) return null;
  const groups = [...headGroups, ...new Array<number>(missing).fill(0), ...restGroups];
  return groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff) ? null : groups;
}
