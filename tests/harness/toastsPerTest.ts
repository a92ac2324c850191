/** Shared hooks for the suites that show toasts (the toasts store is one per page, so one per test file). */
import { afterEach, beforeEach, vi } from "vitest";
import { $toasts, dismissToast } from "../../src/stores/toasts.ts";

/** Every test of the file runs on fake timers and leaves no toast behind for the next. */
export function fakeTimersAndNoToastLeft(): void {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    for (const toast of $toasts.get()) dismissToast(toast.id);
    vi.useRealTimers();
  });
}
