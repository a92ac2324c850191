/**
 * The news pop-up schedule (docs/product-reference.md#9, docs/design.md#3a): the first joke 10 s after page
 * load, then each next one 60 s plus a random 30 to 60 s after the previous, each on screen 4 s.
 * A joke never competes with a real message or a scrolling visitor: when `canShow` says no, that
 * joke is skipped and the schedule goes on. Pure: timers, the random source and the way a pop-up is
 * shown are injected.
 */
import { NEWS_JOKES, type NewsJoke } from "../data/newsJokes.ts";
import { pickByDraw } from "./random.ts";
import { globalTimers, type Timers } from "./timers.ts";

export const FIRST_POPUP_DELAY_MS = 10_000;
const POPUP_INTERVAL_MS = 60_000;
const POPUP_EXTRA_MIN_MS = 30_000;
const POPUP_EXTRA_MAX_MS = 60_000;
export const POPUP_DURATION_MS = 4_000;

export interface NewsPopup extends NewsJoke {
  durationMs: number;
}

export interface NewsPopupOptions {
  show: (popup: NewsPopup) => void;
  /** False while a pop-up must not show (a real toast on screen, the visitor scrolling). */
  canShow?: () => boolean;
  random?: () => number;
  timers?: Timers;
  /** The wait before the first joke (FIRST_POPUP_DELAY_MS from page load); 0 or less shows it at once. */
  firstDelayMs?: number;
}

/** Delay from one pop-up to the next: 90 to 120 s for a draw in [0, 1). */
export function nextPopupDelayMs(random: number): number {
  return POPUP_INTERVAL_MS + POPUP_EXTRA_MIN_MS + Math.floor(random * (POPUP_EXTRA_MAX_MS - POPUP_EXTRA_MIN_MS));
}

export function pickJoke(random: number): NewsJoke {
  return pickByDraw(NEWS_JOKES, random);
}

/** Starts the schedule; the returned function stops it. */
export function startNewsPopups({
  show,
  canShow = () => true,
  random = Math.random,
  timers = globalTimers,
  firstDelayMs = FIRST_POPUP_DELAY_MS,
}: NewsPopupOptions): () => void {
  let handle: unknown;
  const popUp = () => {
    const joke = pickJoke(random());
    if (canShow()) show({ ...joke, durationMs: POPUP_DURATION_MS });
    handle = timers.setTimeout(popUp, nextPopupDelayMs(random()));
  };
  if (firstDelayMs > 0) handle = timers.setTimeout(popUp, firstDelayMs);
  else popUp();
  return () => timers.clearTimeout(handle);
}
