import { describe, expect, it, vi } from "vitest";
import {
  $toasts,
  dismissToast,
  MAX_VISIBLE_TOASTS,
  pauseToast,
  resumeToast,
  showToast,
  TOAST_DURATION_MS,
} from "../../src/stores/toasts.ts";
import { fakeTimersAndNoToastLeft } from "../harness/toastsPerTest.ts";

fakeTimersAndNoToastLeft();

describe("toasts store", () => {
  it("stacks the newest first and keeps at most three", () => {
    for (const title of ["one", "two", "three", "four"]) showToast({ title });
    expect($toasts.get().map((toast) => toast.title)).toEqual(["four", "three", "two"]);
    expect($toasts.get()).toHaveLength(MAX_VISIBLE_TOASTS);
  });

  it("dismisses a toast after 5 s, or after its own duration", () => {
    showToast({ title: "Bid Placed!", description: "You bid $1.00 for absolutely nothing!" });
    showToast({ title: "News", durationMs: 4_000 });
    vi.advanceTimersByTime(3_999);
    expect($toasts.get()).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect($toasts.get().map((toast) => toast.title)).toEqual(["Bid Placed!"]);
    vi.advanceTimersByTime(TOAST_DURATION_MS - 4_000);
    expect($toasts.get()).toEqual([]);
  });

  it("defaults to the plain variant and keeps the destructive one", () => {
    showToast({ title: "Bid Failed", variant: "destructive" });
    showToast({ title: "Copied" });
    expect($toasts.get().map((toast) => toast.variant)).toEqual(["default", "destructive"]);
  });

  it("dismisses by id and ignores an unknown id", () => {
    const id = showToast({ title: "gone" });
    dismissToast(id + 100);
    expect($toasts.get()).toHaveLength(1);
    dismissToast(id);
    expect($toasts.get()).toEqual([]);
  });
});

describe("pausing a toast", () => {
  it("holds it while paused and lets only the time left run out after", () => {
    const id = showToast({ title: "Bid Placed!" });
    vi.advanceTimersByTime(3_000);
    pauseToast(id);
    vi.advanceTimersByTime(60_000);
    expect($toasts.get()).toHaveLength(1);
    resumeToast(id);
    vi.advanceTimersByTime(1_999);
    expect($toasts.get()).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect($toasts.get()).toEqual([]);
  });

  it("ignores a second pause or resume and unknown ids", () => {
    const id = showToast({ title: "News", durationMs: 4_000 });
    pauseToast(id);
    pauseToast(id);
    resumeToast(id);
    resumeToast(id);
    pauseToast(id + 1);
    resumeToast(id + 1);
    vi.advanceTimersByTime(4_000);
    expect($toasts.get()).toEqual([]);
  });
});
