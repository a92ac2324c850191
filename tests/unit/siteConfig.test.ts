import { describe, expect, it } from "vitest";
import {
  ConfigError,
  DEFAULT_SITE_URL,
  PLACEHOLDER_DEFAULTS,
  parseSiteConfig,
  parseSiteUrl,
  VIDEO_SLOTS,
  videoEmbedUrl,
} from "../../src/lib/siteConfig.ts";

const solanaLike = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";

describe("site configuration", () => {
  it("falls back to clearly marked placeholders and lists them", () => {
    const config = parseSiteConfig({});
    expect(config.contractAddress).toBe(PLACEHOLDER_DEFAULTS.PUBLIC_CONTRACT_ADDRESS);
    expect(config.contractAddress).toContain("PLACEHoLDER");
    expect(config.videoIds.promo).toBe("PLACEHOLDER");
    expect(config.placeholders).toContain("PUBLIC_CONTRACT_ADDRESS");
    expect(config.placeholders).toContain("PUBLIC_VIDEO_PROMO");
    expect(config.placeholders).toHaveLength(5 + VIDEO_SLOTS.length);
    expect(config.realtimeUrl).toBe("");
    expect(config.videoEmbedOrigin).toBe("https://www.youtube-nocookie.com");
  });

  it("takes every PUBLIC_* override, trimmed", () => {
    const config = parseSiteConfig({
      PUBLIC_CONTRACT_ADDRESS: ` ${solanaLike} `,
      PUBLIC_PAYMENT_ADDRESS: solanaLike,
      PUBLIC_DONATION_ADDRESS: solanaLike,
      PUBLIC_COMMUNITY_URL: "https://t.me/nothing",
      PUBLIC_CHART_URL: "https://charts.example/embed/zn",
      PUBLIC_VIDEO_PROMO: "abcdefghijk",
      PUBLIC_VIDEO_EMBED_ORIGIN: "https://video.example",
      PUBLIC_REALTIME_URL: "wss://live.example/realtime",
      PUBLIC_NATIVE_COIN: "ETH",
    });
    expect(config.contractAddress).toBe(solanaLike);
    expect(config.communityUrl).toBe("https://t.me/nothing");
    expect(config.chartUrl).toBe("https://charts.example/embed/zn");
    expect(config.videoIds.promo).toBe("abcdefghijk");
    expect(config.videoIds.wheel).toBe("PLACEHOLDER");
    expect(config.realtimeUrl).toBe("wss://live.example/realtime");
    expect(config.nativeCoin).toBe("ETH");
    expect(config.placeholders).not.toContain("PUBLIC_CONTRACT_ADDRESS");
    expect(config.placeholders).toContain("PUBLIC_VIDEO_WHEEL");
  });

  it("treats empty and whitespace-only values as unset", () => {
    const config = parseSiteConfig({ PUBLIC_CONTRACT_ADDRESS: "   ", PUBLIC_REALTIME_URL: "" });
    expect(config.contractAddress).toBe(PLACEHOLDER_DEFAULTS.PUBLIC_CONTRACT_ADDRESS);
    expect(config.realtimeUrl).toBe("");
  });

  it("rejects malformed values with the setting's name in the message", () => {
    expect(() => parseSiteConfig({ PUBLIC_CONTRACT_ADDRESS: "not an address!" })).toThrow(
      /PUBLIC_CONTRACT_ADDRESS must be 20 to 128 letters and digits/,
    );
    expect(() => parseSiteConfig({ PUBLIC_VIDEO_FORTUNE: "short" })).toThrow(
      /PUBLIC_VIDEO_FORTUNE must be an 11-character/,
    );
    expect(() => parseSiteConfig({ PUBLIC_CHART_URL: "http://insecure.example" })).toThrow(
      /PUBLIC_CHART_URL must use https/,
    );
    expect(() => parseSiteConfig({ PUBLIC_COMMUNITY_URL: "t.me/x" })).toThrow(
      /PUBLIC_COMMUNITY_URL must be an absolute URL/,
    );
    expect(() => parseSiteConfig({ PUBLIC_VIDEO_EMBED_ORIGIN: "https://video.example/embed" })).toThrow(
      /PUBLIC_VIDEO_EMBED_ORIGIN must be an origin/,
    );
    expect(() => parseSiteConfig({ PUBLIC_REALTIME_URL: "https://live.example" })).toThrow(/ws:\/\/ or wss:\/\//);
    expect(() => parseSiteConfig({ PUBLIC_CHART_URL: "javascript:alert(1)" })).toThrow(ConfigError);
  });

  it("takes the site's origin from PUBLIC_SITE_URL, which the pages' absolute URLs start with (docs/product.md#2-head)", () => {
    expect(parseSiteUrl({})).toBe(DEFAULT_SITE_URL);
    expect(parseSiteUrl({ PUBLIC_SITE_URL: "  " })).toBe(DEFAULT_SITE_URL);
    expect(parseSiteUrl({ PUBLIC_SITE_URL: " https://Nothing.Example/ " })).toBe("https://nothing.example");
    expect(parseSiteUrl({ PUBLIC_SITE_URL: "http://192.168.1.20:4321" })).toBe("http://192.168.1.20:4321");
  });

  it("refuses a site URL that is not an http(s) origin, naming the setting", () => {
    expect(() => parseSiteUrl({ PUBLIC_SITE_URL: "nothing.example" })).toThrow(
      /PUBLIC_SITE_URL must be an absolute URL, got "nothing.example"/,
    );
    expect(() => parseSiteUrl({ PUBLIC_SITE_URL: "https://nothing.example/store/" })).toThrow(
      /PUBLIC_SITE_URL must be an origin like https:\/\/example.com/,
    );
    expect(() => parseSiteUrl({ PUBLIC_SITE_URL: "https://nothing.example/?ref=x" })).toThrow(/must be an origin/);
    expect(() => parseSiteUrl({ PUBLIC_SITE_URL: "ftp://nothing.example" })).toThrow(
      /PUBLIC_SITE_URL must use https:\/\/ or http:\/\//,
    );
    expect(() => parseSiteUrl({ PUBLIC_SITE_URL: "javascript:alert(1)" })).toThrow(ConfigError);
  });

  it("builds video embed URLs on the configured host", () => {
    expect(videoEmbedUrl({ videoEmbedOrigin: "https://www.youtube-nocookie.com" }, "abcdefghijk")).toBe(
      "https://www.youtube-nocookie.com/embed/abcdefghijk?autoplay=1&rel=0",
    );
  });
});
