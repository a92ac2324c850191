import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readServiceConfig } from "../../realtime/config.ts";

describe("service configuration", () => {
  it("defaults to port 4321 on loopback, serving dist/", () => {
    const config = readServiceConfig({});
    expect(config).toEqual({ port: 4321, host: "127.0.0.1", staticDir: resolve("dist"), logLevel: "info" });
  });

  it("reads PORT, HOST, STATIC_DIR and LOG_LEVEL", () => {
    const config = readServiceConfig({ PORT: "8080", HOST: "0.0.0.0", STATIC_DIR: "/srv/site", LOG_LEVEL: "debug" });
    expect(config).toEqual({ port: 8080, host: "0.0.0.0", staticDir: "/srv/site", logLevel: "debug" });
  });

  it("turns static serving off with an empty STATIC_DIR", () => {
    expect(readServiceConfig({ STATIC_DIR: "" }).staticDir).toBe("");
  });

  it("rejects a PORT that is not a port", () => {
    expect(() => readServiceConfig({ PORT: "http" })).toThrow(/PORT must be an integer from 0 to 65535, got "http"/);
    expect(() => readServiceConfig({ PORT: "70000" })).toThrow(/PORT must be/);
    expect(() => readServiceConfig({ PORT: "12.5" })).toThrow(/PORT must be/);
  });
});
