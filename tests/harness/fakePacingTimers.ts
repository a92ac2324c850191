import { afterEach, beforeEach, vi } from "vitest";

/**
 * Fake timers for the frame budget's clock (realPacingClock in service/auction/conflation.ts
 * looks the globals up on every call): timeouts, the turn's end (setImmediate) and performance.now
 * move only when the test advances them. Installed around every test of the calling file.
 */
export function fakePacingTimersForEachTest(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}
