import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { celFunc, celMethod, CelScalar, type CelFunc } from '@bufbuild/cel';

// Kubernetes' CEL IP and CIDR libraries (k8s.io/apiserver/pkg/cel/library ip.go, cidr.go): ip(),
// isIP(), ip.isCanonical(), family(), isUnspecified(), isLoopback(), isLinkLocalMulticast(),
// isLinkLocalUnicast(), isGlobalUnicast(); cidr(), isCIDR(), containsIP(), containsCIDR(), ip(),
// masked(), prefixLength(). As for quantities (kubernetes-extensions.ts), the values travel as strings
// in a canonical form only these functions produce, so two equal addresses compare equal with `==`.
// As in Kubernetes, IPv4-mapped IPv6 addresses and zones are refused.

const IP_PREFIX = '\u0000ip:';
const CIDR_PREFIX = '\u0000cidr:';

type Family = 4 | 6;

interface Address {
  text: string;
  family: Family;
}

interface Prefix {
  address: Address;
  length: number;
}

/** The canonical text of an address (RFC 5952 for IPv6), or undefined when it is not one. */
function parseAddress(text: string): Address | undefined {
  if (isIPv4(text)) return { text, family: 4 };
  if (!isIPv6(text) || text.includes('%') || /^::ffff:[0-9.]+$/i.test(text) || /\./.test(text))
    return undefined;
  // The WHATWG URL parser writes IPv6 hosts in their canonical compressed form.
  return { text: new URL(`http://[${text}]/`).hostname.slice(1, -1), family: 6 };
}

function parsePrefix(text: string): Prefix | undefined {
  const [addressText, lengthText, ...rest] = text.split('/');
  if (rest.length > 0 || lengthText === undefined || !/^(0|[1-9][0-9]{0,2})$/.test(lengthText))
    return undefined;
  const address = parseAddress(addressText);
  const length = Number(lengthText);
  if (!address || length > (address.family === 4 ? 32 : 128)) return undefined;
  return { address, length };
}

function toIpValue(address: Address): string {
  return `${IP_PREFIX}${address.text}`;
}

function toCidrValue(prefix: Prefix): string {
  return `${CIDR_PREFIX}${prefix.address.text}/${prefix.length}`;
}

function fromIpValue(value: string): Address {
  const address = value.startsWith(IP_PREFIX)
    ? parseAddress(value.slice(IP_PREFIX.length))
    : parseAddress(value);
  if (!address) throw new Error(`IP Address ${JSON.stringify(value)} parse error`);
  return address;
}

function fromCidrValue(value: string): Prefix {
  const prefix = value.startsWith(CIDR_PREFIX)
    ? parsePrefix(value.slice(CIDR_PREFIX.length))
    : parsePrefix(value);
  if (!prefix)
    throw new Error(`network address parse error during conversion from string: ${JSON.stringify(value)}`);
  return prefix;
}

function contains(prefix: Prefix, address: Address): boolean {
  if (prefix.address.family !== address.family) return false;
  const list = new BlockList();
  const type = prefix.address.family === 4 ? 'ipv4' : 'ipv6';
  list.addSubnet(prefix.address.text, prefix.length, type);
  return list.check(address.text, type);
}

/** The address with the host bits cleared. */
function maskedAddress(prefix: Prefix): Address {
  const bits = prefix.address.family === 4 ? 32 : 128;
  const value =
    addressBits(prefix.address) & (((1n << BigInt(prefix.length)) - 1n) << BigInt(bits - prefix.length));
  return addressFromBits(value, prefix.address.family);
}

function addressBits(address: Address): bigint {
  if (address.family === 4)
    return address.text.split('.').reduce((total, octet) => (total << 8n) | BigInt(octet), 0n);
  const [head, tail = ''] = address.text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = address.text.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.text.includes('::')
    ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
    : headGroups;
  return groups.reduce((total, group) => (total << 16n) | BigInt(`0x${group}`), 0n);
}

function addressFromBits(value: bigint, family: Family): Address {
  if (family === 4) {
    const octets = [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n));
    return { text: octets.join('.'), family };
  }
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) =>
    ((value >> shift) & 0xffffn).toString(16),
  );
  return parseAddress(groups.join(':')) as Address;
}

function inRange(address: Address, cidr: string): boolean {
  const prefix = parsePrefix(cidr);
  return prefix !== undefined && contains(prefix, address);
}

function isGlobalUnicast(address: Address): boolean {
  if (address.family === 4)
    return !['0.0.0.0/32', '127.0.0.0/8', '224.0.0.0/4', '169.254.0.0/16', '255.255.255.255/32'].some(
      (range) => inRange(address, range),
    );
  return !['::/128', '::1/128', 'ff00::/8', 'fe80::/10'].some((range) => inRange(address, range));
}

function ipFunctions(): CelFunc[] {
  const S = CelScalar.STRING;
  const B = CelScalar.BOOL;
  const ip = (check: (address: Address) => boolean) =>
    function (this: string) {
      return check(fromIpValue(this));
    };
  return [
    celFunc('ip', [S], S, (text) => toIpValue(fromIpValue(text))),
    celFunc('isIP', [S], B, (text) => parseAddress(text) !== undefined),
    celFunc('ip.isCanonical', [S], B, (text) => fromIpValue(text).text === text),
    celMethod('family', S, [], CelScalar.INT, function () {
      return BigInt(fromIpValue(this).family);
    }),
    celMethod(
      'isUnspecified',
      S,
      [],
      B,
      ip((address) => inRange(address, address.family === 4 ? '0.0.0.0/32' : '::/128')),
    ),
    celMethod(
      'isLoopback',
      S,
      [],
      B,
      ip((address) => inRange(address, address.family === 4 ? '127.0.0.0/8' : '::1/128')),
    ),
    celMethod(
      'isLinkLocalMulticast',
      S,
      [],
      B,
      ip((address) => inRange(address, address.family === 4 ? '224.0.0.0/24' : 'ff02::/16')),
    ),
    celMethod(
      'isLinkLocalUnicast',
      S,
      [],
      B,
      ip((address) => inRange(address, address.family === 4 ? '169.254.0.0/16' : 'fe80::/10')),
    ),
    celMethod('isGlobalUnicast', S, [], B, ip(isGlobalUnicast)),
  ];
}

function cidrFunctions(): CelFunc[] {
  const S = CelScalar.STRING;
  const B = CelScalar.BOOL;
  return [
    celFunc('cidr', [S], S, (text) => toCidrValue(fromCidrValue(text))),
    celFunc('isCIDR', [S], B, (text) => parsePrefix(text) !== undefined),
    celMethod('containsIP', S, [S], B, function (other) {
      return contains(fromCidrValue(this), fromIpValue(other));
    }),
    celMethod('containsCIDR', S, [S], B, function (other) {
      const outer = fromCidrValue(this);
      const inner = fromCidrValue(other);
      return inner.length >= outer.length && contains(outer, maskedAddress(inner));
    }),
    celMethod('ip', S, [], S, function () {
      return toIpValue(fromCidrValue(this).address);
    }),
    celMethod('masked', S, [], S, function () {
      const prefix = fromCidrValue(this);
      return toCidrValue({ address: maskedAddress(prefix), length: prefix.length });
    }),
    celMethod('prefixLength', S, [], CelScalar.INT, function () {
      return BigInt(fromCidrValue(this).length);
    }),
  ];
}

export const NETWORK_CEL_FUNCTIONS: readonly CelFunc[] = [...ipFunctions(), ...cidrFunctions()];
