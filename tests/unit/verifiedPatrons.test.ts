import { describe, expect, it } from "vitest";
import { serviceEndpoint } from "../../src/lib/serviceEndpoint.ts";
import { PATRONS_LIMIT, PATRONS_PATH, parsePatrons } from "../../src/lib/verifiedPatrons.ts";

describe("the patrons' URL", () => {
  it("is GET /payments/patrons on the socket's service, or the page's own origin", () => {
    expect(serviceEndpoint("wss://nothing.example/live/realtime", PATRONS_PATH)).toBe(
      "https://nothing.example/live/payments/patrons",
    );
    expect(serviceEndpoint("", PATRONS_PATH)).toBe("/payments/patrons");
  });
});

describe("parsePatrons", () => {
  const signature = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";
  const patron = {
    name: "Patron Pat",
    total: "100",
    latestSignature: signature,
    explorerUrl: `https://explorer.solana.com/tx/${signature}`,
  };

  it("accepts the service's answer, names as they are", () => {
    const named = { ...patron, name: '<img src=x onerror="alert(1)">', total: "40.5" };
    expect(parsePatrons({ patrons: [patron, named] })).toEqual([patron, named]);
    expect(parsePatrons({ patrons: [{ ...patron, explorerUrl: "http://127.0.0.1:8899/tx/x" }] })).toHaveLength(1);
    expect(parsePatrons({ patrons: [] })).toEqual([]);
  });

  it(`shows at most ${PATRONS_LIMIT}`, () => {
    const many = Array.from({ length: 12 }, (_, index) => ({ ...patron, name: `Patron ${index}` }));
    expect(parsePatrons({ patrons: many })).toEqual(many.slice(0, PATRONS_LIMIT));
  });

  it.each([
    ["name", ""],
    ["name", undefined],
    ["total", 100],
    ["total", "-1"],
    ["total", "1e3"],
    ["latestSignature", ""],
    ["explorerUrl", "javascript:alert(1)"],
    ["explorerUrl", "data:text/html,<b>x</b>"],
    ["explorerUrl", "/tx/relative"],
  ])("refuses a patron whose %s is %j (a link must be http(s))", (field, value) => {
    expect(parsePatrons({ patrons: [{ ...patron, [field]: value }] })).toBeNull();
  });

  it("refuses an answer that is not a list of patrons", () => {
    const answers = [null, "patrons", [], { error: "not_found" }, { patrons: null }];
    for (const body of answers) expect(parsePatrons(body), JSON.stringify(body)).toBeNull();
  });
});
