import { describe, expect, it } from "vitest";
import { parseWinners, WINNERS_LIMIT, WINNERS_PATH, winnersEndpoint } from "../../src/lib/auctionWinners.ts";

describe("winnersEndpoint", () => {
  it("is the same service as the socket, over http(s)", () => {
    expect(winnersEndpoint("ws://127.0.0.1:8787/realtime")).toBe("http://127.0.0.1:8787/auction/winners");
    expect(winnersEndpoint("wss://auction.example.com/realtime")).toBe("https://auction.example.com/auction/winners");
    expect(winnersEndpoint("wss://auction.example.com:8443/realtime")).toBe(
      "https://auction.example.com:8443/auction/winners",
    );
  });

  it("keeps the port a default port of the socket's scheme would hide, and drops a query", () => {
    expect(winnersEndpoint("ws://auction.example.com:443/realtime")).toBe(
      "http://auction.example.com:443/auction/winners",
    );
    expect(winnersEndpoint("wss://auction.example.com/realtime?v=1#x")).toBe(
      "https://auction.example.com/auction/winners",
    );
  });

  it("keeps a proxy's path prefix in front of the service", () => {
    expect(winnersEndpoint("wss://nothing.example/live/realtime")).toBe("https://nothing.example/live/auction/winners");
  });

  it("is the page's own origin when the socket is (no URL configured)", () => {
    expect(winnersEndpoint("")).toBe(WINNERS_PATH);
    expect(WINNERS_PATH).toBe("/auction/winners");
  });
});

describe("parseWinners", () => {
  const winner = { round: 3, bidderName: "Ada", amountCents: 123_450, endedAt: "2026-11-21T18:30:00.000Z" };

  it("accepts the service's answer, names as they are", () => {
    const named = { ...winner, bidderName: '<img src=x onerror="alert(1)">' };
    expect(parseWinners({ winners: [named, { ...winner, round: 2 }] })).toEqual([named, { ...winner, round: 2 }]);
    expect(parseWinners({ winners: [] })).toEqual([]);
  });

  it(`shows at most ${WINNERS_LIMIT}`, () => {
    const many = Array.from({ length: 12 }, (_, index) => ({ ...winner, round: 12 - index }));
    expect(parseWinners({ winners: many })).toEqual(many.slice(0, WINNERS_LIMIT));
  });

  it("refuses anything else", () => {
    for (const body of [
      null,
      "winners",
      [],
      { error: "unavailable" },
      { winners: null },
      { winners: [{ ...winner, amountCents: "123450" }] },
      { winners: [{ ...winner, amountCents: 12.5 }] },
      { winners: [{ ...winner, round: 0 }] },
      { winners: [{ ...winner, endedAt: "yesterday" }] },
      { winners: [{ ...winner, bidderName: undefined }] },
    ]) {
      expect(parseWinners(body), JSON.stringify(body)).toBeNull();
    }
  });
});
