// Which IP addresses a fetch may connect to: everything globally routable, nothing internal
// (loopback, private, link-local, CGNAT, unique-local, multicast, reserved, documentation, …),
// including IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4).
import { isIP } from 'node:net';

type Range = readonly [prefix: string, bits: number, label: string];

// IANA's IPv4 special-purpose registry, less the few entries that are globally reachable.
const IPV4_BLOCKED: readonly Range[] = [
  ['0.0.0.0', 8, 'a reserved "this network"'],
  ['10.0.0.0', 8, 'a private'],
  ['100.64.0.0', 10, 'a carrier-grade NAT'],
  ['127.0.0.0', 8, 'a loopback'],
  ['169.254.0.0', 16, 'a link-local'],
  ['172.16.0.0', 12, 'a private'],
  ['192.0.0.0', 24, 'a reserved'],
  ['192.0.2.0', 24, 'a documentation'],
  ['192.88.99.0', 24, 'a reserved'],
  ['192.168.0.0', 16, 'a private'],
  ['198.18.0.0', 15, 'a benchmarking'],
  ['198.51.100.0', 24, 'a documentation'],
  ['203.0.113.0', 24, 'a documentation'],
  ['224.0.0.0', 4, 'a multicast'],
  ['240.0.0.0', 4, 'a reserved'],
];

// IPv6 blocks checked before the "must be global unicast 2000::/3" rule; embedded IPv4 forms are
// handled separately.
const IPV6_BLOCKED: readonly Range[] = [
  ['64:ff9b:1::', 48, 'a local-use NAT64'],
  ['100::', 64, 'a discard-only'],
  ['2001::', 23, 'a reserved'],
  ['2001:db8::', 32, 'a documentation'],
  ['3fff::', 20, 'a documentation'],
  ['5f00::', 16, 'a reserved'],
  ['fc00::', 7, 'a unique-local'],
  ['fe80::', 10, 'a link-local'],
  ['fec0::', 10, 'a site-local'],
  ['ff00::', 8, 'a multicast'],
];

/** The 4 bytes of a dotted-quad IPv4 address, or null. */
function parseIPv4(text: string): Uint8Array | null {
  if (isIP(text) !== 4) return null;
  return Uint8Array.from(text.split('.').map(Number));
}

/** The 16 bytes of an IPv6 address (zone id ignored, trailing dotted quad allowed), or null. */
function parseIPv6(text: string): Uint8Array | null {
  const address = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(address) !== 6) return null;
  let head = address;
  const tailBytes: number[] = [];
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  if (dotted) {
    const v4 = parseIPv4(dotted[1]);
    if (!v4) return null;
    tailBytes.push(...v4);
    head = `${head.slice(0, dotted.index)}:0:0`; // placeholder groups, replaced below
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const leftGroups = left ? left.split(':') : [];
  const rightGroups = right === undefined ? [] : right ? right.split(':') : [];
  const missing = 8 - leftGroups.length - rightGroups.length;
  if (missing < 0 || (right === undefined && missing !== 0)) return null;
  const groups = [...leftGroups, ...Array<string>(missing).fill('0'), ...rightGroups];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  if (tailBytes.length === 4) bytes.set(tailBytes, 12);
  return bytes;
}

function inRange(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i += 1) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((bytes[byte] & mask) !== (prefix[byte] & mask)) return false;
  }
  return true;
}

const v4Ranges = IPV4_BLOCKED.map(([prefix, bits, label]) => ({ prefix: parseIPv4(prefix)!, bits, label }));
// Parsed at the first IPv6 address checked, not at start: the first IPv6 isIP() compiles Node's
// IPv6 pattern (~15 ms), which a process that never meets an IPv6 address need not pay.
let v6Ranges: { prefix: Uint8Array; bits: number; label: string }[] | undefined;

function classifyV4(bytes: Uint8Array): string | null {
  for (const range of v4Ranges) if (inRange(bytes, range.prefix, range.bits)) return range.label;
  return null;
}

function embedded(bytes: Uint8Array, at: number): Uint8Array {
  return bytes.subarray(at, at + 4);
}

function classifyV6(bytes: Uint8Array): string | null {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  if (zeros(0, 16)) return 'an unspecified';
  if (zeros(0, 15) && bytes[15] === 1) return 'a loopback';
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated)
  if (zeros(0, 10) && ((bytes[10] === 0xff && bytes[11] === 0xff) || (bytes[10] === 0 && bytes[11] === 0))) {
    return classifyV4(embedded(bytes, 12)) ?? (bytes[10] === 0 ? 'a reserved' : null);
  }
  // 64:ff9b::/96, the well-known NAT64 prefix, reaches the IPv4 address it embeds
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) {
    return classifyV4(embedded(bytes, 12));
  }
  // 2002::/16 (6to4) embeds an IPv4 address in bits 16–47
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return classifyV4(embedded(bytes, 2));
  v6Ranges ??= IPV6_BLOCKED.map(([prefix, bits, label]) => ({ prefix: parseIPv6(prefix)!, bits, label }));
  for (const range of v6Ranges) if (inRange(bytes, range.prefix, range.bits)) return range.label;
  if ((bytes[0] & 0xe0) !== 0x20) return 'a reserved';
  return null;
}

/**
 * Why `address` (an IPv4 or IPv6 literal) must not be fetched from, as a phrase such as
 * "a private", "a loopback" (to be followed by "address"), or null when it is a public address.
 * Text that is not an IP address is refused as "an unparseable".
 */
export function blockedAddressReason(address: string): string | null {
  const v4 = parseIPv4(address);
  if (v4) return classifyV4(v4);
  const v6 = parseIPv6(address);
  if (v6) return classifyV6(v6);
  return 'an unparseable';
}

/** True when `address` is a public, globally routable IP address. */
export function isPublicAddress(address: string): boolean {
  return blockedAddressReason(address) === null;
}
