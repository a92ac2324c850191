import { describe, expect, it } from "vitest";
import { addressGroups, createFairShares, shareBudgets } from "../../service/http/fairShares.ts";

describe("addressGroups", () => {
  it("counts IPv6 by its /64, /56 and /48, in one spelling", () => {
    expect(addressGroups("2001:DB8:4800:12ab:1:2:3:4")).toEqual({
      client: "2001:db8:4800:12ab::/64",
      mid: "2001:db8:4800:1200::/56",
      wide: "2001:db8:4800::/48",
    });
    expect(addressGroups("2001:db8:4800:12ab::9%eth0").client).toBe("2001:db8:4800:12ab::/64");
  });

  it("counts IPv4 (mapped or not) by its address and /24, and anything else as one client", () => {
    const v4 = { client: "192.0.2.7", mid: null, wide: "192.0.2.0/24" };
    expect(addressGroups("192.0.2.7")).toEqual(v4);
    expect(addressGroups("::ffff:192.0.2.7")).toEqual(v4);
    expect(addressGroups("::ffff:c000:207")).toEqual(v4);
    expect(addressGroups("unknown")).toEqual({ client: "unknown", mid: null, wide: null });
  });
});

describe("shareBudgets", () => {
  it("grows with the prefix, a /48 or /24 at most a tenth, the client bounded by its /56", () => {
    expect(shareBudgets({ capacity: 1_000, perClient: 20 })).toEqual({
      capacity: 1_000,
      client: 20,
      mid: 75,
      wide: 100,
      open: 800,
      light: 10,
    });
    expect(shareBudgets({ capacity: 1_792, perClient: 256 }).client).toBe(134);
  });
});

describe("createFairShares", () => {
  const rules = { capacity: 1_000, perClient: 20 };
  const v6 = (subnet: number, host = 1) => `2001:db8:4800:${subnet.toString(16)}::${host}`;

  it("holds 100 /64s of one /48 to the /48's tenth, and a buyer elsewhere is still served", () => {
    const shares = createFairShares(rules);
    let taken = 0;
    const refusals = new Map<string, number>();
    for (let subnet = 0; subnet < 100; subnet++) {
      for (let i = 0; i < 11; i++) {
        const outcome = shares.take(v6(subnet * 256));
        if (outcome.taken) taken++;
        else refusals.set(outcome.refusal, (refusals.get(outcome.refusal) ?? 0) + 1);
      }
    }
    expect(taken).toBe(100);
    expect(refusals).toEqual(new Map([["wide", 1_000]]));
    expect(shares.take("198.51.100.4").taken).toBe(true);
  });

  it("refuses a client at its share, its /56 at its own, and frees a unit once", () => {
    const shares = createFairShares(rules);
    const held = Array.from({ length: 20 }, () => shares.take(v6(1)));
    expect(shares.take(v6(1, 2))).toEqual({ taken: false, refusal: "client" });
    // Other /64s of the same /56 (subnets 0x00-0xff share 2001:db8:4800::/56).
    for (let subnet = 2; subnet < 5; subnet++) for (let i = 0; i < 20; i++) shares.take(v6(subnet));
    expect(shares.held(v6(7))).toMatchObject({ mid: 75, wide: 75 });
    expect(shares.take(v6(7))).toEqual({ taken: false, refusal: "mid" });
    const first = held[0];
    if (!first?.taken) throw new Error("the first unit was taken");
    first.release();
    first.release();
    expect(shares.held(v6(1))).toMatchObject({ client: 19, mid: 74 });
  });

  it("keeps the reserve for groups holding little: the heaviest are refused, a newcomer served, until full", () => {
    const shares = createFairShares(rules);
    // Ten /24s ask for their tenth each: eight get it (the open part, 800); past it the last two are
    // served only while they hold little (10 each).
    let taken = 0;
    for (let net = 0; net < 10; net++) {
      for (let host = 1; host <= 25; host++) {
        for (let i = 0; i < 4; i++) if (shares.take(`10.${net}.0.${host}`).taken) taken++;
      }
    }
    expect(taken).toBe(820);
    expect(shares.take("10.9.0.200")).toEqual({ taken: false, refusal: "reserve" });
    // 180 newcomers, each from a network of its own, fill the rest; then nobody.
    for (let i = 0; i < 180; i++) expect(shares.take(`172.16.${i}.1`).taken).toBe(true);
    expect(shares.take("192.0.2.1")).toEqual({ taken: false, refusal: "full" });
  });
});
