/** The request target rules of docs/design.md#11, case by case (the live answers: tests/service/http/httpRegressions.test.ts). */
import { describe, expect, it } from "vitest";
import { MAX_TARGET_LENGTH, parseRequestTarget } from "../../service/http/requestTarget.ts";

const HOST = "127.0.0.1:4321";

function accepted(raw: string, host = HOST) {
  const parsed = parseRequestTarget(raw, host);
  if (!parsed.ok) throw new Error(`refused ${raw}: ${parsed.refusal.message}`);
  const { path, decodedPath, search, query } = parsed.target;
  return { path, decodedPath, search, query: [...query] };
}

function refused(raw: string | undefined, host = HOST) {
  const parsed = parseRequestTarget(raw, host);
  if (parsed.ok) throw new Error(`accepted ${raw}`);
  return parsed.refusal;
}

describe("parseRequestTarget", () => {
  it("reads an origin-form target's path and query", () => {
    expect(accepted("/realtime?after=12&round=3")).toEqual({
      path: "/realtime",
      decodedPath: "/realtime",
      search: "?after=12&round=3",
      query: [
        ["after", "12"],
        ["round", "3"],
      ],
    });
    expect(accepted("/")).toMatchObject({ path: "/", search: "" });
  });

  it("resolves dot segments, encoded ones too, and never climbs above /", () => {
    expect(accepted("/./_headers").path).toBe("/_headers");
    expect(accepted("/_astro/../_headers").path).toBe("/_headers");
    expect(accepted("/%2e%2E/%2e/_headers").path).toBe("/_headers");
    expect(accepted("/../../etc/passwd").path).toBe("/etc/passwd");
  });

  it("keeps percent-encoding in the path and decodes it in decodedPath", () => {
    expect(accepted("/%5Fheaders/")).toMatchObject({ path: "/%5Fheaders/", decodedPath: "/_headers/" });
    expect(accepted("/%E2%82%AC")).toMatchObject({ decodedPath: "/\u20ac" });
    // Characters a URL parser encodes in a path are still the same path.
    expect(accepted("/<script>").path).toBe("/%3Cscript%3E");
  });

  it.each([
    ["//", "may not start with //"],
    ["//x:99999", "may not start with //"],
    ["//[", "may not start with //"],
    ["//%", "not followed by two hex digits"],
    ["/%", "not followed by two hex digits"],
    ["/%zz", "not followed by two hex digits"],
    ["/ok?q=100%", "not followed by two hex digits"],
    ["/%FF", "not valid UTF-8"],
    ["/%C3%28", "not valid UTF-8"],
    ["/\\evil.example", "only visible ASCII characters, without \\ or #"],
    ["/page#top", "only visible ASCII characters, without \\ or #"],
    ["/caf\u00e9", "only visible ASCII characters"],
    ["/a b", "only visible ASCII characters"],
    ["*", "must be a path starting with /"],
    ["example.com:443", "must be a path starting with /"],
    ["http://evil.example/healthz", "names another host"],
    ["http://127.0.0.1:4322/", "names another host"],
    ["http://user:pw@127.0.0.1:4321/", "may not carry credentials"],
    ["ftp://127.0.0.1:4321/", "not an http URL"],
    ["http://[/", "not a valid URL"],
    ["http://127.0.0.1:4321//x", "may not start with //"],
  ])("refuses %s with 400: %s", (raw, says) => {
    const refusal = refused(raw);
    expect(refusal.status).toBe(400);
    expect(refusal.error).toBe("bad_request_target");
    expect(refusal.message).toContain(says);
  });

  it("refuses a missing or empty target", () => {
    expect(refused(undefined).message).toBe("The request has no target.");
    expect(refused("").message).toBe("The request has no target.");
  });

  it(`refuses a target over ${MAX_TARGET_LENGTH} characters with 414, and takes one of exactly that`, () => {
    expect(refused(`/${"a".repeat(MAX_TARGET_LENGTH)}`)).toMatchObject({ status: 414, error: "uri_too_long" });
    expect(accepted(`/${"a".repeat(MAX_TARGET_LENGTH - 1)}`).path).toHaveLength(MAX_TARGET_LENGTH);
  });

  it("takes an absolute-form target that names the request's own Host, however the port is spelt", () => {
    expect(accepted("http://127.0.0.1:4321/healthz?x=1")).toMatchObject({ path: "/healthz", search: "?x=1" });
    expect(accepted("http://EXAMPLE.com/", "example.com:80").path).toBe("/");
    expect(accepted("https://example.com:443/a", "example.com").path).toBe("/a");
    expect(parseRequestTarget("http://127.0.0.1:4321/", undefined)).toMatchObject({
      ok: false,
      refusal: { message: "The request target names another host." },
    });
    expect(refused("http://127.0.0.1:4321/", "[").message).toContain("names another host");
  });
});
