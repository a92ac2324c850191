import { describe, expect, it, vi } from "vitest";
import { NEWS_JOKES } from "../../src/data/newsJokes.ts";
import {
  FIRST_POPUP_DELAY_MS,
  type NewsPopup,
  nextPopupDelayMs,
  POPUP_DURATION_MS,
  pickJoke,
  startNewsPopups,
} from "../../src/lib/newsPopups.ts";
import { fakeTimersAndNoToastLeft } from "../harness/toastsPerTest.ts";

fakeTimersAndNoToastLeft();

describe("news pop-up schedule", () => {
  it("has twelve distinct jokes and picks one by the random draw", () => {
    expect(NEWS_JOKES).toHaveLength(12);
    expect(new Set(NEWS_JOKES.map((joke) => joke.description)).size).toBe(12);
    expect(pickJoke(0)).toBe(NEWS_JOKES[0]);
    expect(pickJoke(0.5)).toBe(NEWS_JOKES[6]);
    expect(pickJoke(0.9999)).toBe(NEWS_JOKES[11]);
  });

  it("waits 60 s plus 30 to 60 s between pop-ups", () => {
    expect(nextPopupDelayMs(0)).toBe(90_000);
    expect(nextPopupDelayMs(0.5)).toBe(105_000);
    expect(nextPopupDelayMs(0.9999)).toBeLessThan(120_000);
  });

  it("shows the first at 10 s, then each next 60 + 30..60 s after the previous, for 4 s each", () => {
    const shown: { at: number; popup: NewsPopup }[] = [];
    // Draws alternate: the joke, then the delay to the next pop-up.
    const draws = [0.25, 0, 0.5, 0.99, 0.9999];
    const random = vi.fn(() => draws.shift() ?? 0);
    const start = Date.now();
    startNewsPopups({ show: (popup) => shown.push({ at: Date.now() - start, popup }), random });

    vi.advanceTimersByTime(FIRST_POPUP_DELAY_MS - 1);
    expect(shown).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(shown).toEqual([{ at: 10_000, popup: { ...NEWS_JOKES[3], durationMs: 4000 } }]);
    expect(POPUP_DURATION_MS).toBe(4000);

    // Second: 60 s + 30 s (draw 0) after the first.
    vi.advanceTimersByTime(90_000 - 1);
    expect(shown).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(shown[1]).toEqual({ at: 100_000, popup: { ...NEWS_JOKES[6], durationMs: 4000 } });

    // Third: 60 s + 59.7 s (draw 0.99) after the second.
    vi.advanceTimersByTime(119_700 - 1);
    expect(shown).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(shown[2]?.at).toBe(219_700);
    expect(shown[2]?.popup.title).toBe(NEWS_JOKES[11]?.title);
  });

  it("counts the first from page load when started late, and shows it at once when it is due already", () => {
    const show = vi.fn();
    startNewsPopups({ show, random: () => 0, firstDelayMs: 4_000 });
    vi.advanceTimersByTime(3_999);
    expect(show).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(show).toHaveBeenCalledTimes(1);
    const late = vi.fn();
    startNewsPopups({ show: late, random: () => 0, firstDelayMs: -250 });
    expect(late).toHaveBeenCalledWith({ ...NEWS_JOKES[0], durationMs: POPUP_DURATION_MS });
  });

  it("stops when asked", () => {
    const show = vi.fn();
    const stop = startNewsPopups({ show, random: () => 0 });
    vi.advanceTimersByTime(FIRST_POPUP_DELAY_MS);
    stop();
    vi.advanceTimersByTime(10 * 60_000);
    expect(show).toHaveBeenCalledTimes(1);
  });

  it("skips a joke while it may not show (a real toast, a scrolling visitor), and goes on", () => {
    const show = vi.fn();
    let allowed = false;
    startNewsPopups({ show, canShow: () => allowed, random: () => 0 });
    vi.advanceTimersByTime(FIRST_POPUP_DELAY_MS);
    expect(show).not.toHaveBeenCalled();
    allowed = true;
    vi.advanceTimersByTime(90_000);
    expect(show).toHaveBeenCalledTimes(1);
    expect(show).toHaveBeenCalledWith({ ...NEWS_JOKES[0], durationMs: POPUP_DURATION_MS });
  });
});
