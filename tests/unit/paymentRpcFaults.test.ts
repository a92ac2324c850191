/** Retry-After as a 429 gives it (RFC 9110): seconds or an HTTP date; the watcher waits that long. */
import { describe, expect, it } from "vitest";
import { retryAfterMs } from "../../service/payments/chain.ts";

describe("Retry-After", () => {
  const now = Date.UTC(2026, 10, 24, 12);

  it("reads seconds and HTTP dates, a date in the past as now", () => {
    expect(retryAfterMs("7", now)).toBe(7_000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs("Tue, 24 Nov 2026 12:00:30 GMT", now)).toBe(30_000);
    expect(retryAfterMs("Tue, 24 Nov 2026 11:00:00 GMT", now)).toBe(0);
  });

  it("ignores what it cannot read", () => {
    expect(retryAfterMs(null, now)).toBeNull();
    expect(retryAfterMs("", now)).toBeNull();
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs("-5", now)).toBeNull();
  });
});
