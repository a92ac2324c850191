/** Refused upgrades logged once a minute per key, in bounded memory (service/http/refusalLog.ts). */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRefusalLog, MAX_REMEMBERED_REFUSALS, REFUSAL_LOG_INTERVAL_MS } from "../../service/http/refusalLog.ts";

describe("the refusal log", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A log on the fake clock that records what it would write: [key, unlogged]. */
  function recordedLog(maxKeys?: number) {
    const written: [string, number][] = [];
    const log = createRefusalLog({ now: () => Date.now(), maxKeys });
    return { log, written, refuse: (key: string) => log.note(key, (unlogged) => written.push([key, unlogged])) };
  }

  it("writes a key's first refusal, then one line a minute counting the refusals left unlogged", () => {
    const { written, refuse } = recordedLog();
    refuse("https://elsewhere.example");
    refuse("https://elsewhere.example");
    refuse("https://other.example");
    vi.advanceTimersByTime(REFUSAL_LOG_INTERVAL_MS - 1);
    refuse("https://elsewhere.example");
    expect(written).toEqual([
      ["https://elsewhere.example", 0],
      ["https://other.example", 0],
    ]);
    vi.advanceTimersByTime(1);
    refuse("https://elsewhere.example");
    refuse("https://elsewhere.example");
    vi.advanceTimersByTime(REFUSAL_LOG_INTERVAL_MS);
    refuse("https://elsewhere.example");
    refuse("https://other.example");
    expect(written.slice(2)).toEqual([
      ["https://elsewhere.example", 2],
      ["https://elsewhere.example", 1],
      ["https://other.example", 0],
    ]);
  });

  it("remembers at most maxKeys keys, forgetting the least recently refused first", () => {
    const { log, written, refuse } = recordedLog(3);
    for (const key of ["a", "b", "c", "a", "d"]) refuse(key);
    expect(log.size).toBe(3);
    // "b" was forgotten for "d": it is written again at once; "a" is still remembered.
    refuse("b");
    refuse("a");
    expect(written.map(([key]) => key)).toEqual(["a", "b", "c", "d", "b"]);
  });

  it("holds a flood of distinct keys to the default bound", () => {
    const { log, written, refuse } = recordedLog();
    for (let i = 0; i < MAX_REMEMBERED_REFUSALS * 3; i++) refuse(`https://flood-${i}.example`);
    expect(log.size).toBe(MAX_REMEMBERED_REFUSALS);
    expect(written).toHaveLength(MAX_REMEMBERED_REFUSALS * 3);
  });
});
