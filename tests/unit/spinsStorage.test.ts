import { describe, expect, it } from "vitest";
import {
  parseStoredSpins,
  readStoredSpins,
  SPINS_STORAGE_KEY,
  STARTING_SPINS,
  writeStoredSpins,
} from "../../src/lib/spinsStorage.ts";
import { memoryStorage, throwingStorage } from "../harness/storages.ts";

describe("parseStoredSpins", () => {
  it("starts at 1 when nothing is stored", () => {
    expect(STARTING_SPINS).toBe(1);
    expect(parseStoredSpins(null)).toBe(1);
    expect(parseStoredSpins(undefined)).toBe(1);
    expect(parseStoredSpins("")).toBe(1);
  });

  it("reads a whole number, ignoring surrounding spaces", () => {
    expect(parseStoredSpins("7")).toBe(7);
    expect(parseStoredSpins(" 12 ")).toBe(12);
    expect(parseStoredSpins("0")).toBe(0);
    expect(parseStoredSpins("007")).toBe(7);
  });

  it("treats what the store never writes as nothing stored", () => {
    for (const stored of ["abc", "-3", "3.9", "1e3", "7abc", "+4", "Infinity", "NaN", "99999999999999999999"]) {
      expect(parseStoredSpins(stored), stored).toBe(STARTING_SPINS);
    }
  });
});

describe("reading and writing the stored count", () => {
  it("writes the count as an integer under nothingStoreSpins and reads it back", () => {
    const storage = memoryStorage();
    writeStoredSpins(storage, 42);
    expect(SPINS_STORAGE_KEY).toBe("nothingStoreSpins");
    expect(storage.items.get("nothingStoreSpins")).toBe("42");
    expect(readStoredSpins(storage)).toBe(42);
  });

  it("tolerates a storage that throws or is missing", () => {
    expect(readStoredSpins(throwingStorage)).toBe(STARTING_SPINS);
    expect(() => writeStoredSpins(throwingStorage, 3)).not.toThrow();
    expect(readStoredSpins(undefined)).toBe(STARTING_SPINS);
    expect(() => writeStoredSpins(undefined, 3)).not.toThrow();
  });
});
