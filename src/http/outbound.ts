/**
 * The outbound policy (issue 30 item 11), opt-in, one per engine (its configuration): every outbound call (event and
 * scheduled webhooks, action handlers, remote schemas, the auth webhook, the JWK set) goes through
 * src/http/client.ts (the engine's `OutboundClient`, which holds the policy), which asks this
 * module before it connects.
 *
 * - `--outbound-allow-hosts h1,*.example.com`: when set, only these hosts may be called (exact host
 *   names or IP literals, or `*.suffix` for any subdomain); anything else is refused.
 * - `--outbound-deny-private`: the addresses a host resolves to must be public: loopback, private
 *   (RFC 1918, RFC 4193), link-local (169.254/16 with the cloud metadata address, fe80::/10), CGNAT,
 *   unspecified, multicast, reserved and documentation ranges are refused, also when written as
 *   IPv4-mapped (`[::ffff:a9fe:a9fe]`), IPv4-compatible or NAT64 IPv6 addresses. The check is made
 *   on the resolved addresses the connection uses (node:http's `lookup` hook), so a name that
 *   resolves to a private address is refused too. A host on the allow-list is exempt.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export interface OutboundPolicy {
  denyPrivate: boolean;
  allowHosts: string[];
}

/** The policy of a configuration (`--outbound-deny-private`, `--outbound-allow-hosts`); none: everything allowed. */
export function outboundPolicy(p: Partial<OutboundPolicy> = {}): Readonly<OutboundPolicy> {
  return { denyPrivate: p.denyPrivate === true, allowHosts: (p.allowHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean) };
}

export class OutboundDeniedError extends Error {
  readonly code = 'ERR_OUTBOUND_DENIED';
  constructor(message: string) {
    super(message);
    this.name = 'OutboundDeniedError';
  }
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedV4(addr: string): string | undefined {
  const groups = expandV6(addr);
  if (!groups) return undefined;
  const v4 = () => `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  const zeros = (n: number) => groups.slice(0, n).every((g) => g === 0);
  if (zeros(5) && groups[5] === 0xffff) return v4();
  if (zeros(6) && (groups[6] !== 0 || groups[7]! > 1)) return v4();
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) return v4();
  return undefined;
}

/** An IPv6 address as its eight 16-bit groups (a dotted IPv4 tail converted). */
function expandV6(addr: string): number[] | undefined {
  let a = addr.toLowerCase().split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number) as [number, number, number, number];
    a = `${a.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = a.includes('::') ? 8 - h.length - t.length : 0;
  const all = [...h, ...Array(fill).fill('0'), ...t].map((g) => parseInt(g, 16));
  return all.length === 8 && all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : undefined;
}

/** Is the address one --outbound-deny-private refuses? */
export function isPrivateAddress(addr: string): boolean {
  const family = isIP(addr);
  if (family === 4) return blocked.check(addr, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(addr);
    if (v4 !== undefined) return blocked.check(v4, 'ipv4');
    return blocked.check(addr.split('%')[0]!, 'ipv6');
  }
  return true;
}

function hostAllowed(policy: Readonly<OutboundPolicy>, host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return policy.allowHosts.some((p) => (p.startsWith('*.') ? h.endsWith(p.slice(1)) : p.replace(/^\[|\]$/g, '') === h));
}

/**
 * Checks a URL's host before connecting. Returns `true` when the resolved addresses must be checked
 * too (deny-private on, the host a name not on the allow-list); throws when the host is refused.
 */
export function checkOutboundHost(policy: Readonly<OutboundPolicy>, hostname: string): boolean {
  if (!policy.denyPrivate && policy.allowHosts.length === 0) return false; // no policy (the default)
  const host = hostname.replace(/^\[|\]$/g, '');
  const listed = policy.allowHosts.length > 0 && hostAllowed(policy, host);
  if (policy.allowHosts.length > 0 && !listed) {
    throw new OutboundDeniedError(`outbound request to ${JSON.stringify(host)} refused: the host is not in --outbound-allow-hosts`);
  }
  if (!policy.denyPrivate || listed) return false;
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new OutboundDeniedError(`outbound request to ${host} refused: a private address (--outbound-deny-private)`);
    return false;
  }
  return true;
}

function checkResolved(host: string, addrs: LookupAddress[]): void {
  const bad = addrs.find((a) => isPrivateAddress(a.address));
  if (bad)
    throw new OutboundDeniedError(
      `outbound request to ${JSON.stringify(host)} refused: it resolves to the private address ${bad.address} (--outbound-deny-private)`,
    );
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for node:http(s) requests that refuses private addresses (deny-private on). */
export function guardedLookup(hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addrs) => {
    if (err) return callback(err, []);
    try {
      checkResolved(hostname, addrs);
    } catch (e) {
      return callback(e as NodeJS.ErrnoException, []);
    }
    if ((options as LookupAllOptions).all) return callback(null, addrs);
    const first = addrs[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}

/** For callers that cannot hook the connection's lookup (fetch): resolve and check first. */
export async function checkOutboundUrl(policy: Readonly<OutboundPolicy>, url: string): Promise<void> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return; // the request itself reports the bad URL
  }
  if (!checkOutboundHost(policy, u.hostname)) return;
  const addrs = await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(u.hostname, { all: true }, (e, a) => (e ? reject(e) : resolve(a))));
  checkResolved(u.hostname, addrs);
}
