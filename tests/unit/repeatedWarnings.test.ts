/** Repeated warnings written once per interval with a count, in bounded memory (service/repeatedWarnings.ts). */
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../service/logger.ts";
import {
  attachRepeatedWarnings,
  createRepeatedWarnings,
  endRepeated,
  logRepeated,
  MAX_REMEMBERED_WARNINGS,
  REPEATED_WARNING_INTERVAL_MS,
} from "../../service/repeatedWarnings.ts";

describe("repeated warnings", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Warnings on the fake clock that record what they would write: [key, repeated]. */
  function recorded(maxKeys?: number) {
    const written: [string, number][] = [];
    const warnings = createRepeatedWarnings({ now: () => Date.now(), maxKeys });
    return {
      warnings,
      written,
      note: (key: string) => warnings.note(key, (repeated) => written.push([key, repeated])),
    };
  }

  /** A logger on the fake clock whose lines the test reads. */
  function recordingLogger() {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger("info", sink);
    attachRepeatedWarnings(logger, createRepeatedWarnings({ now: () => Date.now() }));
    return { logger, lines };
  }

  it("writes a key's first occurrence, then one line an interval counting the occurrences since the previous line", () => {
    const { written, note } = recorded();
    note("https://elsewhere.example");
    note("https://elsewhere.example");
    note("https://other.example");
    vi.advanceTimersByTime(REPEATED_WARNING_INTERVAL_MS - 1);
    note("https://elsewhere.example");
    expect(written).toEqual([
      ["https://elsewhere.example", 0],
      ["https://other.example", 0],
    ]);
    vi.advanceTimersByTime(1);
    note("https://elsewhere.example");
    note("https://elsewhere.example");
    vi.advanceTimersByTime(REPEATED_WARNING_INTERVAL_MS);
    note("https://elsewhere.example");
    note("https://other.example");
    expect(written.slice(2)).toEqual([
      ["https://elsewhere.example", 3],
      ["https://elsewhere.example", 2],
      ["https://other.example", 1],
    ]);
  });

  it("ends a condition in one call with its failures in all and how long it lasted, then writes its next occurrence at once", () => {
    const { warnings, written, note } = recorded();
    const ends: [number, number][] = [];
    warnings.ended("never noted", (failures, forMs) => ends.push([failures, forMs]));
    expect(ends).toEqual([]);
    for (let second = 0; second < 90; second++) {
      note("lease");
      vi.advanceTimersByTime(1_000);
    }
    warnings.ended("lease", (failures, forMs) => ends.push([failures, forMs]));
    warnings.ended("lease", (failures, forMs) => ends.push([failures, forMs]));
    expect(ends).toEqual([[90, 90_000]]);
    note("lease");
    expect(written).toEqual([
      ["lease", 0],
      ["lease", 60],
      ["lease", 0],
    ]);
  });

  it("remembers at most maxKeys keys, forgetting the least recently noted first", () => {
    const { warnings, written, note } = recorded(3);
    for (const key of ["a", "b", "c", "a", "d"]) note(key);
    expect(warnings.size).toBe(3);
    // "b" was forgotten for "d": it is written again at once; "a" is still remembered.
    note("b");
    note("a");
    expect(written.map(([key]) => key)).toEqual(["a", "b", "c", "d", "b"]);
  });

  it("holds a flood of distinct keys to the default bound", () => {
    const { warnings, written, note } = recorded();
    for (let i = 0; i < MAX_REMEMBERED_WARNINGS * 3; i++) note(`https://flood-${i}.example`);
    expect(warnings.size).toBe(MAX_REMEMBERED_WARNINGS);
    expect(written).toHaveLength(MAX_REMEMBERED_WARNINGS * 3);
  });

  it("logs a 20-s outage's four warnings, each failing every second, in four lines and their ends in four more", () => {
    const { logger, lines } = recordingLogger();
    // Children share their parent's memory, as the service's components do.
    const payments = logger.child({ component: "payments" });
    const storage = logger.child({ component: "storage" });
    const failing = [
      () => logRepeated(payments, "warn", { err: "down" }, "could not try for the payment watcher lease"),
      () => logRepeated(storage, "warn", {}, "catching up failed; retrying"),
      () => logRepeated(logger, "warn", {}, "could not read the opening snapshot"),
      () => logRepeated(logger, "error", {}, "could not read the opening snapshot", "another key"),
    ];
    for (let second = 0; second < 20; second++) {
      for (const fail of failing) fail();
      vi.advanceTimersByTime(1_000);
    }
    expect(lines.filter((line) => Number(line.level) >= 40)).toHaveLength(4);
    expect(lines.every((line) => line.repeated === 0)).toBe(true);
    endRepeated(payments, "could not try for the payment watcher lease", "trying for the lease again");
    endRepeated(logger, "could not read the opening snapshot", "snapshots read again", "another key");
    expect(lines.slice(4)).toEqual([
      expect.objectContaining({
        level: 30,
        component: "payments",
        failures: 20,
        forMs: 20_000,
        after: "could not try for the payment watcher lease",
        msg: "trying for the lease again",
      }),
      expect.objectContaining({ level: 30, failures: 20, msg: "snapshots read again" }),
    ]);
  });

  it("logs an hour of a warning every second in 60 lines, each after the first counting the minute's 60", () => {
    const { logger, lines } = recordingLogger();
    for (let second = 0; second < 3_600; second++) {
      logRepeated(logger, "warn", {}, "could not try for the payment watcher lease");
      vi.advanceTimersByTime(1_000);
    }
    expect(lines).toHaveLength(60);
    expect(lines.map((line) => line.repeated)).toEqual([0, ...Array.from({ length: 59 }, () => 60)]);
  });
});
