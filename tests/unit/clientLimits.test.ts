import { readdirSync, readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clientAddress, isTrustedProxy, limitKey, maskAddress, overHttps } from "../../service/http/clientAddress.ts";
import { isOriginAllowed } from "../../service/http/originPolicy.ts";
import { createRateLimiter } from "../../service/http/rateLimiter.ts";
import { expectEach } from "../harness/expectEach.ts";

function request(peer: string, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

describe("client address", () => {
  it("is the socket's peer unless proxies are trusted", () => {
    expect(clientAddress(request("203.0.113.7", { "x-forwarded-for": "198.51.100.1" }), 0)).toBe("203.0.113.7");
  });

  it("reads one X-Forwarded-For entry per trusted hop, from the right, while each hop is a trusted proxy", () => {
    const proxies = ["10.0.0.0/24"];
    const req = request("10.0.0.2", { "x-forwarded-for": "6.6.6.6, 198.51.100.1, 10.0.0.1" });
    expect(clientAddress(req, 1, proxies)).toBe("10.0.0.1");
    expect(clientAddress(req, 2, proxies)).toBe("198.51.100.1");
    // A client's own entry (198.51.100.1) is no proxy: what it wrote left of it is never read.
    expect(clientAddress(req, 3, proxies)).toBe("198.51.100.1");
    // More hops than entries: the leftmost, never beyond.
    expect(clientAddress(request("10.0.0.2", { "x-forwarded-for": "10.0.0.9" }), 5, proxies)).toBe("10.0.0.9");
    expect(clientAddress(request("10.0.0.2"), 1, proxies)).toBe("10.0.0.2");
  });

  it("believes X-Forwarded-For and -Proto only from a trusted proxy: anyone else counts as itself", () => {
    const headers = { "x-forwarded-for": "198.51.100.1", "x-forwarded-proto": "https" };
    // Loopback by default: a proxy on this machine.
    expect(clientAddress(request("127.0.0.1", headers), 1)).toBe("198.51.100.1");
    expect(clientAddress(request("::1", headers), 1)).toBe("198.51.100.1");
    expect(overHttps(request("127.0.0.1", headers), 1)).toBe(true);
    // A direct connection from elsewhere picks neither its key nor https.
    expect(clientAddress(request("203.0.113.9", headers), 1)).toBe("203.0.113.9");
    expect(overHttps(request("203.0.113.9", headers), 1)).toBe(false);
    expect(clientAddress(request("2001:db8::5", headers), 1, ["2001:db8::/32"])).toBe("198.51.100.1");
    expect(isTrustedProxy("::ffff:127.0.0.1")).toBe(true);
    expect(isTrustedProxy("unknown")).toBe(false);
  });

  it("is asked with the configured proxies everywhere in the service, never with loopback by default", () => {
    const calls: string[] = [];
    for (const entry of readdirSync("service", { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name === "clientAddress.ts") continue;
      const text = readFileSync(join(entry.parentPath, entry.name), "utf8");
      for (const call of text.matchAll(/\b(clientAddress|overHttps|requestOrigin)\(([^()]*)\)/g)) {
        if ((call[2] ?? "").split(",").length !== 3) calls.push(`${entry.name}: ${call[0]}`);
      }
    }
    expect(calls.filter((call) => !call.includes("function "))).toEqual([]);
  });

  it("counts an IPv4-mapped IPv6 peer as its IPv4 address", () => {
    expect(clientAddress(request("::ffff:192.0.2.5"), 0)).toBe("192.0.2.5");
  });

  it("is masked to its network part for the logs", () => {
    expectEach(maskAddress, [
      ["203.0.113.7", "203.0.113.x"],
      ["2001:db8:85a3::8a2e:370:7334", "2001:db8:85a3::x"],
      ["::1", "0:0:0::x"],
      ["unknown", "unknown"],
    ]);
  });
});

describe("limit key (docs/design.md#11)", () => {
  it("is an IPv4 address as it is, and IPv4-mapped IPv6 in any spelling as its IPv4 address", () => {
    expectEach(limitKey, [
      ["203.0.113.7", "203.0.113.7"],
      ["::ffff:203.0.113.7", "203.0.113.7"],
      ["::FFFF:203.0.113.7", "203.0.113.7"],
      ["::ffff:cb00:7107", "203.0.113.7"],
      ["0:0:0:0:0:ffff:cb00:7107", "203.0.113.7"],
    ]);
  });

  it("is an IPv6 address's /64, one spelling for every way of writing it", () => {
    const key = "2001:db8:85a3:1::/64";
    for (const address of [
      "2001:db8:85a3:1::1",
      "2001:db8:85a3:1:ffff:ffff:ffff:ffff",
      "2001:0DB8:85A3:0001:0000:0000:0000:0001",
      "2001:db8:85a3:1:0:0:192.0.2.1",
      "2001:db8:85a3:1::",
    ]) {
      expect(limitKey(address), address).toBe(key);
    }
    expectEach(limitKey, [
      ["2001:db8:85a3:2::1", "2001:db8:85a3:2::/64"],
      ["2001:db8::1", "2001:db8::/64"],
      ["2001:db8:0:0:1::", "2001:db8::/64"],
      ["::1", "::/64"],
      ["fe80::1%eth0", "fe80::/64"],
    ]);
  });

  it("leaves what is no address as it is", () => {
    expect(limitKey("unknown")).toBe("unknown");
    expect(limitKey("2001:db8::1::2")).toBe("2001:db8::1::2");
  });

  it("is masked for the logs as the address is", () => {
    expect(maskAddress(limitKey("2001:db8:85a3:1::1"))).toBe("2001:db8:85a3::x");
    expect(maskAddress(limitKey("::ffff:203.0.113.7"))).toBe("203.0.113.x");
  });
});

describe("origin policy", () => {
  it("allows the same origin by default and refuses others", () => {
    expect(isOriginAllowed(request("", { host: "shop.test:4321", origin: "http://shop.test:4321" }), [])).toBe(true);
    expect(isOriginAllowed(request("", { host: "shop.test", origin: "https://shop.test" }), [])).toBe(true);
    expect(isOriginAllowed(request("", { host: "shop.test:443", origin: "https://shop.test" }), [])).toBe(true);
    expect(isOriginAllowed(request("", { host: "shop.test", origin: "https://evil.test" }), [])).toBe(false);
    expect(isOriginAllowed(request("", { host: "shop.test", origin: "null" }), [])).toBe(false);
  });

  it("allows exactly the listed origins when configured", () => {
    const allowed = ["https://nothing.store"];
    expect(isOriginAllowed(request("", { host: "api.test", origin: "https://nothing.store" }), allowed)).toBe(true);
    expect(isOriginAllowed(request("", { host: "api.test", origin: "http://nothing.store" }), allowed)).toBe(false);
    expect(isOriginAllowed(request("", { host: "api.test", origin: "http://api.test" }), allowed)).toBe(false);
    expect(isOriginAllowed(request("", { host: "api.test", origin: "https://anything.test" }), ["*"])).toBe(true);
  });

  it("allows clients that send no Origin (not browsers)", () => {
    expect(isOriginAllowed(request("", { host: "shop.test" }), ["https://nothing.store"])).toBe(true);
  });
});

describe("rate limiter", () => {
  it("allows the limit within any window and forgets events as they age out", () => {
    let now = 0;
    const limiter = createRateLimiter(3, 1000, () => now);
    expect([1, 2, 3, 4].map(() => limiter.take("a"))).toEqual([true, true, true, false]);
    expect(limiter.take("b")).toBe(true);
    now = 999;
    expect(limiter.take("a")).toBe(false);
    // All three events at 0 leave the window at 1000.
    now = 1000;
    expect([1, 2, 3, 4].map(() => limiter.take("a"))).toEqual([true, true, true, false]);
  });

  it("forgets idle keys on sweep", () => {
    let now = 0;
    const limiter = createRateLimiter(1, 100, () => now);
    limiter.take("a");
    limiter.take("b");
    now = 150;
    limiter.sweep();
    expect(limiter.size).toBe(0);
  });
});
