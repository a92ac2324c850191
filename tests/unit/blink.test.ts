import { describe, expect, it } from "vitest";
import { blinkLinks, buyActionUrl } from "../../src/lib/blink.ts";

describe("the store's blink links", () => {
  it("puts the action on the site's origin when the socket is, and beside the service's socket otherwise", () => {
    expect(buyActionUrl("", "https://nothing.example/")).toBe("https://nothing.example/api/actions/buy");
    expect(buyActionUrl("wss://live.example/realtime", "https://nothing.example/", "2")).toBe(
      "https://live.example/api/actions/buy?tier=2",
    );
    // A proxy's path prefix is kept, as for the service's other routes.
    expect(buyActionUrl("wss://x.example/live/realtime", "https://nothing.example/")).toBe(
      "https://x.example/live/api/actions/buy",
    );
  });

  it("writes the action after solana-action: as it is, URL-encoded once it has a query", () => {
    expect(blinkLinks("https://nothing.example/api/actions/buy")).toEqual({
      action: "solana-action:https://nothing.example/api/actions/buy",
      dialTo: "https://dial.to/?action=solana-action:https%3A%2F%2Fnothing.example%2Fapi%2Factions%2Fbuy",
    });
    expect(blinkLinks("https://nothing.example/api/actions/buy?tier=2")).toEqual({
      action: "solana-action:https%3A%2F%2Fnothing.example%2Fapi%2Factions%2Fbuy%3Ftier%3D2",
      dialTo: "https://dial.to/?action=solana-action:https%3A%2F%2Fnothing.example%2Fapi%2Factions%2Fbuy%3Ftier%3D2",
    });
  });
});
