/**
 * The console's event stream ends with its session (docs/design.md#9): at its expiry, at once when a
 * revocation is announced, and at the next keep-alive when the database says the session is no
 * longer live (an announcement lost with the LISTEN connection), on fake timers. The announcement
 * across real instances: tests/service/console/adminAcrossInstances.test.ts.
 */
import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createModerationDesk } from "../../service/console/moderation.ts";
import { createLogger } from "../../service/logger.ts";
import { createMetrics } from "../../service/metrics.ts";
import { endlessRoundView, scriptedStore } from "../harness/scriptedStore.ts";

const KEEP_ALIVE_MS = 25_000;
const SESSION = { id: "session-1", expiresAtMs: 10 * 60_000 };

/** The few parts of a response the stream uses; `ended` once it ends. */
function fakeResponse() {
  const closeListeners: (() => void)[] = [];
  const response = {
    written: "",
    ended: false,
    writeHead() {
      return response;
    },
    write(chunk: string) {
      response.written += chunk;
      return true;
    },
    end() {
      if (response.ended) return response;
      response.ended = true;
      for (const listener of closeListeners) listener();
      return response;
    },
    once(event: string, listener: () => void) {
      if (event === "close") closeListeners.push(listener);
      return response;
    },
  };
  return response;
}

function openStream(isLive: () => Promise<boolean>) {
  const { store } = scriptedStore({
    view: async () => endlessRoundView([], [], 0),
    bidsAfter: async () => endlessRoundView([], [], 0),
  });
  const revoked = new Set<(id: string | null) => void>();
  store.admin.onSessionRevoked = (listener) => {
    revoked.add(listener);
    return () => void revoked.delete(listener);
  };
  const desk = createModerationDesk({
    store,
    logger: createLogger("silent"),
    metrics: createMetrics(),
    headers: {},
    now: () => Date.now(),
    isLive,
  });
  const response = fakeResponse();
  desk.streamChanges(response as unknown as ServerResponse, SESSION);
  return {
    response,
    announce: (id: string | null) => {
      for (const listener of revoked) listener(id);
    },
    listening: () => revoked.size,
  };
}

describe("the console's event stream", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("ends when its own session's revocation or every session's is announced, not another's", () => {
    const own = openStream(async () => true);
    own.announce("another session");
    expect(own.response.ended).toBe(false);
    own.announce(SESSION.id);
    expect(own.response.ended).toBe(true);
    expect(own.listening()).toBe(0);

    const all = openStream(async () => true);
    all.announce(null);
    expect(all.response.ended).toBe(true);
  });

  it("asks the database at each keep-alive, and ends once the session is not live", async () => {
    const answers = [true, false];
    const isLive = vi.fn(async () => answers.shift() ?? false);
    const stream = openStream(isLive);
    await vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS);
    expect(isLive).toHaveBeenCalledTimes(1);
    expect(stream.response.ended).toBe(false);
    await vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS);
    expect(isLive).toHaveBeenCalledTimes(2);
    expect(stream.response.ended).toBe(true);
    expect(stream.response.written).toBe(": live\n\n: keep-alive\n\n: keep-alive\n\n");
  });

  it("keeps going while the database cannot be asked, and ends at the session's expiry", async () => {
    const stream = openStream(() => Promise.reject(new Error("the database is unavailable")));
    await vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS * 2);
    expect(stream.response.ended).toBe(false);
    await vi.advanceTimersByTimeAsync(SESSION.expiresAtMs - KEEP_ALIVE_MS * 2);
    expect(stream.response.ended).toBe(true);
  });
});
