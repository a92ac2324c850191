/**
 * Who a connection belongs to, for the per-address limits: the socket's peer, or with TRUST_PROXY
 * hops in front, the X-Forwarded-For entry that the outermost trusted proxy saw connect; and the
 * key those limits count it under (limitKey). Whether it came over https, read the same way.
 *
 * A hop is believed only from a proxy's own address (TRUSTED_PROXIES, loopback by default), as
 * nginx's set_real_ip_from does: a direct connection from anywhere else counts as itself, whatever
 * it writes in X-Forwarded-For, and a TRUST_PROXY above the real hops lets no client pick its key.
 */
import type { IncomingMessage } from "node:http";
import { BlockList, isIPv4, isIPv6 } from "node:net";

/** The proxies believed when TRUSTED_PROXIES is unset: one on this machine. */
export const LOOPBACK_PROXIES: readonly string[] = ["127.0.0.0/8", "::1/128"];

const proxyLists = new WeakMap<readonly string[], BlockList>();

/** Whether `address` is one of `proxies` (addresses or CIDR ranges, as config.ts checked them). */
export function isTrustedProxy(address: string, proxies: readonly string[] = LOOPBACK_PROXIES): boolean {
  let list = proxyLists.get(proxies);
  if (!list) {
    list = new BlockList();
    for (const entry of proxies) {
      const [network = "", bits] = entry.split("/");
      const type = isIPv4(network) ? "ipv4" : "ipv6";
      if (bits === undefined) list.addAddress(network, type);
      else list.addSubnet(network, Number(bits), type);
    }
    proxyLists.set(proxies, list);
  }
  const bare = normalise(address);
  if (isIPv4(bare)) return list.check(bare, "ipv4");
  return isIPv6(bare) && list.check(bare, "ipv6");
}

/** The comma-separated entries of an X-Forwarded-* header, in the order the proxies appended them. */
function forwardedEntries(req: IncomingMessage, name: "x-forwarded-for" | "x-forwarded-proto"): string[] {
  const header = req.headers[name];
  return (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/** The request reached us over https: directly, or as the outermost trusted proxy reports it. */
export function overHttps(
  req: IncomingMessage,
  trustProxy: number,
  proxies: readonly string[] = LOOPBACK_PROXIES,
): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  if (trustProxy === 0 || !isTrustedProxy(req.socket.remoteAddress ?? "", proxies)) return false;
  // As for the client's address: read no further left than the trusted hops.
  const hops = forwardedEntries(req, "x-forwarded-proto");
  return hops[Math.max(0, hops.length - trustProxy)] === "https";
}

export function clientAddress(
  req: IncomingMessage,
  trustProxy: number,
  proxies: readonly string[] = LOOPBACK_PROXIES,
): string {
  const peer = normalise(req.socket.remoteAddress ?? "unknown");
  if (trustProxy === 0) return peer;
  const forwarded = forwardedEntries(req, "x-forwarded-for").map(normalise);
  // Each trusted proxy appended the address it saw: walk back one entry per hop from the peer,
  // and only while the address in hand is a trusted proxy's. A client may prepend anything it
  // likes, so never read further left than the trusted hops.
  let address = peer;
  for (let hop = 0; hop < trustProxy && isTrustedProxy(address, proxies); hop++) {
    const previous = forwarded.pop();
    if (previous === undefined) break;
    address = previous;
  }
  return address;
}

/** One spelling per address: IPv4-mapped IPv6 ("::ffff:10.0.0.1") counts as the IPv4 address. */
function normalise(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address.toLowerCase();
}

/**
 * The key every per-address limit counts a client under (open sockets, bids, sign-ins;
 * docs/design.md#11): an IPv4 address as it is, IPv4-mapped IPv6 as its IPv4 address, and IPv6 as
 * its /64 network in one spelling (`2001:db8:0:1::/64`). A subscriber is handed a whole /64, so a
 * limit per IPv6 address would hold them to nothing. Anything else (no address) stays as it is.
 */
export function limitKey(address: string): string {
  const v4 = normalise(address);
  if (isIPv4(v4)) return v4;
  // A zone (fe80::1%eth0) names the interface, not the client.
  const bare = address.replace(/%.*$/, "");
  if (!isIPv6(bare)) return address;
  const groups = expandIPv6(canonicalIPv6(bare)) as string[];
  if (groups.slice(0, 5).every((group) => group === "0") && groups[5] === "ffff") {
    const [high, low] = [groups[6], groups[7]].map((group) => Number.parseInt(group as string, 16)) as [number, number];
    return [high >> 8, high & 255, low >> 8, low & 255].join(".");
  }
  return `${canonicalIPv6(`${groups.slice(0, 4).join(":")}::`)}/64`;
}

/** The IPv6 network of `address` (a valid IPv6 address) with its first `bits` kept, in one spelling ("2001:db8::/48"). */
export function ipv6Prefix(address: string, bits: number): string {
  const words = (expandIPv6(canonicalIPv6(address)) ?? []).map((group) => Number.parseInt(group, 16));
  const kept = words.map((word, index) => {
    const from = index * 16;
    if (from + 16 <= bits) return word;
    if (from >= bits) return 0;
    return word & (0xffff << (16 - (bits - from))) & 0xffff;
  });
  return `${canonicalIPv6(kept.map((word) => word.toString(16)).join(":"))}/${bits}`;
}

/** The WHATWG URL spelling: lower case, no leading zeros, the longest zero run as "::", IPv4 tails in hex. */
function canonicalIPv6(address: string): string {
  return new URL(`http://[${address}]`).hostname.slice(1, -1);
}

/** The address for logs: the network part only (IPv4 /24, IPv6 /48), so logs hold no full client address. */
export function maskAddress(address: string): string {
  // A limit key or a fair share names a network (/64, /56, /48, /24): mask its address the same way.
  const bare = address.replace(/\/\d+$/, "");
  if (isIPv4(bare)) return bare.replace(/\.\d+$/, ".x");
  if (isIPv6(bare)) {
    const groups = expandIPv6(bare);
    return groups ? `${groups.slice(0, 3).join(":")}::x` : "ipv6";
  }
  return "unknown";
}

function expandIPv6(address: string): string[] | null {
  const [head = "", tail] = address.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  return [...left, ...Array<string>(missing).fill("0"), ...right];
}
