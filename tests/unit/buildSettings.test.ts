import { describe, expect, it } from "vitest";
import { placeholderWarning, readBuildSettings } from "../../src/lib/buildSettings.ts";
import { ConfigError, DEFAULT_SITE_URL, VIDEO_SLOTS } from "../../src/lib/siteConfig.ts";

const ACCEPTED_SOCKET_URLS = [
  "wss://api.example/realtime",
  "ws://127.0.0.1:4321/realtime",
  " wss://x.example/live/realtime ",
];

/** What the build refuses for PUBLIC_REALTIME_URL, and the URL the message offers instead (docs/settings.md "Building the pages"). */
const REFUSED_SOCKET_URLS: [value: string, problem: RegExp, offered: string][] = [
  ["wss://api.example/", /must end in \/realtime/, "wss://api.example/realtime"],
  ["wss://api.example", /must end in \/realtime/, "wss://api.example/realtime"],
  ["wss://api.example/realtime/", /must end in \/realtime/, "wss://api.example/realtime"],
  ["ws://127.0.0.1:4321/live", /must end in \/realtime/, "ws://127.0.0.1:4321/live/realtime"],
  ["wss://api.example/realtime/x", /must end in \/realtime/, "wss://api.example/realtime/x/realtime"],
  ["https://api.example/realtime", /must use ws:\/\/ or wss:\/\//, "wss://api.example/realtime"],
  ["http://api.example:8080", /must use ws:\/\/ or wss:\/\//, "ws://api.example:8080/realtime"],
  ["wss://api.example/realtime?token=1", /must have no query or fragment/, "wss://api.example/realtime"],
  ["wss://api.example/realtime#x", /must have no query or fragment/, "wss://api.example/realtime"],
  ["wss://api.example/realtime?", /must have no query or fragment/, "wss://api.example/realtime"],
];

describe("the build's settings, checked before anything is built", () => {
  it("takes a socket URL whose path ends in /realtime, a proxy's prefix included", () => {
    for (const value of ACCEPTED_SOCKET_URLS) {
      expect(() => readBuildSettings({ PUBLIC_REALTIME_URL: value }), value).not.toThrow();
    }
    // Unset or blank: the page's own origin, /realtime.
    expect(() => readBuildSettings({ PUBLIC_REALTIME_URL: "  " })).not.toThrow();
  });

  it("refuses a socket URL the auction could not use, naming the variable and the URL it likely meant", () => {
    for (const [value, problem, offered] of REFUSED_SOCKET_URLS) {
      let message = "";
      try {
        readBuildSettings({ PUBLIC_REALTIME_URL: value });
      } catch (error) {
        expect(error, value).toBeInstanceOf(ConfigError);
        message = (error as Error).message;
      }
      expect(message, value).toMatch(/^PUBLIC_REALTIME_URL /);
      expect(message, value).toMatch(problem);
      expect(message, value).toContain(`e.g. ${offered}, got "${value}"`);
    }
    expect(() => readBuildSettings({ PUBLIC_REALTIME_URL: "api.example/realtime" })).toThrow(
      'PUBLIC_REALTIME_URL must be an absolute ws:// or wss:// URL ending in /realtime, e.g. wss://auction.example.com/realtime, got "api.example/realtime"',
    );
  });

  it("refuses ws:// for pages served over https, which the browser would refuse silently, but not on loopback", () => {
    expect(() =>
      readBuildSettings({
        PUBLIC_SITE_URL: "https://nothing.example",
        PUBLIC_REALTIME_URL: "ws://api.example/realtime",
      }),
    ).toThrow(
      'PUBLIC_REALTIME_URL must use wss:// when PUBLIC_SITE_URL is https:// (browsers refuse ws:// from a secure page), e.g. wss://api.example/realtime, got "ws://api.example/realtime"',
    );
    for (const [site, socket] of [
      ["https://nothing.example", "wss://api.example/realtime"],
      ["https://nothing.example", "ws://127.0.0.1:4321/realtime"],
      ["https://nothing.example", "ws://localhost:4321/realtime"],
      ["https://nothing.example", "ws://[::1]:4321/realtime"],
      ["http://192.168.1.20:4321", "ws://192.168.1.20:4322/realtime"],
    ]) {
      expect(() => readBuildSettings({ PUBLIC_SITE_URL: site, PUBLIC_REALTIME_URL: socket }), socket).not.toThrow();
    }
  });

  it("names the variable and the value of every malformed URL setting", () => {
    const cases: [string, string, RegExp][] = [
      ["PUBLIC_SITE_URL", "https://nothing example", /must be an absolute URL/],
      ["PUBLIC_SITE_URL", "nothing.example", /must be an absolute URL/],
      ["PUBLIC_SITE_URL", "https://nothing.example/store", /must be an origin/],
      ["PUBLIC_COMMUNITY_URL", "t.me/nothing", /must be an absolute URL/],
      ["PUBLIC_CHART_URL", "http://charts.example", /must use https:\/\//],
      ["PUBLIC_VIDEO_EMBED_ORIGIN", "video.example", /must be an absolute URL/],
    ];
    for (const [key, value, problem] of cases) {
      expect(() => readBuildSettings({ [key]: value }), key).toThrow(problem);
      expect(() => readBuildSettings({ [key]: value }), key).toThrow(`${key} must`);
      expect(() => readBuildSettings({ [key]: value }), key).toThrow(`got "${value}"`);
    }
  });

  it("gives Astro the site's origin and lists PUBLIC_SITE_URL among the placeholders while it is unset", () => {
    const unset = readBuildSettings({});
    expect(unset.site).toBe(DEFAULT_SITE_URL);
    expect(unset.placeholders[0]).toBe("PUBLIC_SITE_URL");
    expect(unset.placeholders).toHaveLength(1 + 5 + VIDEO_SLOTS.length);
    expect(placeholderWarning(unset.placeholders)).toMatch(
      /^\[nothing-store\] placeholder values in use, set before launch: PUBLIC_SITE_URL, PUBLIC_VIDEO_PROMO, .*PUBLIC_CONTRACT_ADDRESS/,
    );

    const set = readBuildSettings({ PUBLIC_SITE_URL: "https://nothing.example/" });
    expect(set.site).toBe("https://nothing.example");
    expect(set.placeholders).not.toContain("PUBLIC_SITE_URL");
    expect(placeholderWarning([])).toBeNull();
  });
});
