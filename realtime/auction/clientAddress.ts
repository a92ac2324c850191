/**
 * Who a connection belongs to, for the per-address limits: the socket's peer, or with TRUST_PROXY
 * hops in front, the X-Forwarded-For entry that the outermost trusted proxy saw connect.
 */
import type { IncomingMessage } from "node:http";
import { isIPv4, isIPv6 } from "node:net";

/** The comma-separated entries of an X-Forwarded-* header, in the order the proxies appended them. */
export function forwardedEntries(req: IncomingMessage, name: "x-forwarded-for" | "x-forwarded-proto"): string[] {
  const header = req.headers[name];
  return (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

export function clientAddress(req: IncomingMessage, trustProxy: number): string {
  const peer = normalise(req.socket.remoteAddress ?? "unknown");
  if (trustProxy === 0) return peer;
  const forwarded = forwardedEntries(req, "x-forwarded-for");
  // Each trusted proxy appended the address it saw: walk back one entry per hop from the peer.
  // A client may prepend anything it likes, so never read further left than the trusted hops.
  const chain = [...forwarded.map(normalise), peer];
  return chain[Math.max(0, chain.length - 1 - trustProxy)] ?? peer;
}

/** One spelling per address: IPv4-mapped IPv6 ("::ffff:10.0.0.1") counts as the IPv4 address. */
function normalise(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address.toLowerCase();
}

/** The address for logs: the network part only (IPv4 /24, IPv6 /48), so logs hold no full client address. */
export function maskAddress(address: string): string {
  if (isIPv4(address)) return address.replace(/\.\d+$/, ".x");
  if (isIPv6(address)) {
    const groups = expandIPv6(address);
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
