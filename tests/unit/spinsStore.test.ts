// @vitest-environment happy-dom
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { PLAN_PURCHASED_EVENT } from "../../src/lib/purchase.ts";
import { SPINS_STORAGE_KEY } from "../../src/lib/spinsStorage.ts";
import {
  $celebrating,
  $lastPrize,
  $spinning,
  $spins,
  $totalWins,
  $wheelNews,
  CELEBRATION_MS,
  FREE_SPIN_INTERVAL_MS,
  SPIN_DURATION_MS,
  spin,
  startSpins,
} from "../../src/stores/spins.ts";
import { memoryStorage, throwingStorage } from "../harness/storages.ts";

/** Draw points on the 155 weights: 0 is Basic Nothing (common), 0.9 is Epic Emptiness. */
const COMMON = 0;
const EPIC = 0.9;

/** A storage holding `initial` as the stored count, or nothing. */
function storedSpins(initial?: string) {
  return memoryStorage(initial === undefined ? [] : [[SPINS_STORAGE_KEY, initial]]);
}

const purchase = (events: EventTarget, spins: number, planId = 2) =>
  events.dispatchEvent(new CustomEvent(PLAN_PURCHASED_EVENT, { detail: { planId, spins } }));

// The store loads the draw with the first spin; loaded once here, later imports resolve at once,
// so a spin still ends exactly SPIN_DURATION_MS after it starts.
beforeAll(() => import("../../src/lib/prizeDraw.ts"));

describe("spins store", () => {
  let stop: () => void = () => {};
  let random = COMMON;
  let events: EventTarget;

  const start = (stored?: string) => {
    const storage = storedSpins(stored);
    stop = startSpins({ storage, events, random: () => random });
    return storage;
  };

  beforeEach(() => {
    vi.useFakeTimers();
    random = COMMON;
    events = new EventTarget();
  });
  afterEach(() => {
    stop();
    vi.useRealTimers();
  });

  it("starts at 1 with nothing stored and writes it", () => {
    const storage = start();
    expect($spins.get()).toBe(1);
    expect(storage.items.get(SPINS_STORAGE_KEY)).toBe("1");
  });

  it("loads the stored count and rewrites it on every change", () => {
    const storage = start("4");
    expect($spins.get()).toBe(4);
    spin();
    expect(storage.items.get(SPINS_STORAGE_KEY)).toBe("3");
    purchase(events, 7);
    expect(storage.items.get(SPINS_STORAGE_KEY)).toBe("10");
  });

  it("adds a free spin every 60 s, without a cap", () => {
    start("0");
    vi.advanceTimersByTime(FREE_SPIN_INTERVAL_MS - 1);
    expect($spins.get()).toBe(0);
    vi.advanceTimersByTime(1);
    expect($spins.get()).toBe(1);
    expect($wheelNews.get()).toMatchObject({ kind: "credited", source: "free", added: 1, spins: 1 });
    vi.advanceTimersByTime(FREE_SPIN_INTERVAL_MS * 100);
    expect($spins.get()).toBe(101);
  });

  it("spends a spin at once and shows the prize after 2 s, adding a win", async () => {
    start("2");
    expect(spin()).toBe(true);
    expect($spins.get()).toBe(1);
    expect($spinning.get()).toBe(true);
    expect($lastPrize.get()).toBeNull();
    await vi.advanceTimersByTimeAsync(SPIN_DURATION_MS - 1);
    expect($totalWins.get()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect($spinning.get()).toBe(false);
    expect($lastPrize.get()?.name).toBe("Basic Nothing");
    expect($totalWins.get()).toBe(1);
    expect($wheelNews.get()).toMatchObject({ kind: "won", totalWins: 1 });
  });

  it("refuses to spin while spinning or with no spins left", async () => {
    start("2");
    spin();
    expect(spin()).toBe(false);
    expect($spins.get()).toBe(1);
    await vi.advanceTimersByTimeAsync(SPIN_DURATION_MS);
    expect(spin()).toBe(true);
    await vi.advanceTimersByTimeAsync(SPIN_DURATION_MS);
    expect($spins.get()).toBe(0);
    expect(spin()).toBe(false);
    expect($spinning.get()).toBe(false);
    expect($totalWins.get()).toBe(2);
  });

  it("celebrates a non-common prize for 3 s, and not a common one", async () => {
    start("2");
    spin();
    await vi.advanceTimersByTimeAsync(SPIN_DURATION_MS);
    expect($celebrating.get()).toBe(false);

    random = EPIC;
    spin();
    await vi.advanceTimersByTimeAsync(SPIN_DURATION_MS);
    expect($lastPrize.get()?.name).toBe("Epic Emptiness");
    expect($celebrating.get()).toBe(true);
    await vi.advanceTimersByTimeAsync(CELEBRATION_MS - 1);
    expect($celebrating.get()).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect($celebrating.get()).toBe(false);
  });

  it("stopping cancels a spin under way", async () => {
    start("2");
    spin();
    stop();
    start("2");
    await vi.advanceTimersByTimeAsync(SPIN_DURATION_MS);
    expect($lastPrize.get()).toBeNull();
    expect($totalWins.get()).toBe(0);
  });

  it("credits a planPurchased event's spins once and celebrates for 3 s", () => {
    start("1");
    purchase(events, 7);
    expect($spins.get()).toBe(8);
    expect($celebrating.get()).toBe(true);
    expect($wheelNews.get()).toMatchObject({ kind: "credited", source: "purchase", added: 7, spins: 8 });
    vi.advanceTimersByTime(CELEBRATION_MS);
    expect($celebrating.get()).toBe(false);
  });

  it("starts only once, so a second start never credits a purchase twice", () => {
    start("1");
    startSpins({ events, storage: storedSpins("50") });
    expect($spins.get()).toBe(1);
    purchase(events, 3);
    expect($spins.get()).toBe(4);
  });

  it("ignores a malformed planPurchased event", () => {
    start("1");
    events.dispatchEvent(new CustomEvent(PLAN_PURCHASED_EVENT, { detail: { planId: 2, spins: "lots" } }));
    events.dispatchEvent(new Event(PLAN_PURCHASED_EVENT));
    expect($spins.get()).toBe(1);
    expect($celebrating.get()).toBe(false);
  });

  it("restarts a celebration instead of cutting it short", () => {
    start("1");
    purchase(events, 3);
    vi.advanceTimersByTime(2_000);
    purchase(events, 3);
    vi.advanceTimersByTime(2_000);
    expect($celebrating.get()).toBe(true);
    vi.advanceTimersByTime(1_000);
    expect($celebrating.get()).toBe(false);
  });

  it("keeps counting in memory when storage throws", () => {
    stop = startSpins({ storage: throwingStorage, events, random: () => random });
    expect($spins.get()).toBe(1);
    purchase(events, 3);
    expect($spins.get()).toBe(4);
  });

  it("listens on the window by default", () => {
    vi.stubGlobal("localStorage", storedSpins("2"));
    stop = startSpins();
    purchase(window, 7);
    expect($spins.get()).toBe(9);
    vi.unstubAllGlobals();
  });
});
