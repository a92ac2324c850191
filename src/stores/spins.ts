/**
 * The lottery wheel's state (docs/product-behaviour.md#4, docs/design.md#3a). It starts with the home page, not
 * with the wheel island: the spin count and its persistence, the free-spin timer, and the
 * planPurchased listener, the one path by which a purchase credits spins. The island only shows
 * these atoms and calls spin(). Time runs on setTimeout/setInterval and randomness is injected,
 * so fake clocks and stubbed sources drive it in tests.
 */
import { atom } from "nanostores";
import type { Prize } from "../data/prizes.ts";
import { PLAN_PURCHASED_EVENT, purchasedSpins } from "../lib/purchase.ts";
import type { RandomSource } from "../lib/random.ts";
import {
  browserStorage,
  readStoredSpins,
  type SpinsStorage,
  STARTING_SPINS,
  writeStoredSpins,
} from "../lib/spinsStorage.ts";

export const FREE_SPIN_INTERVAL_MS = 60_000;
export const SPIN_DURATION_MS = 2_000;
export const CELEBRATION_MS = 3_000;
/** Dots of confetti in a celebration. */
export const CONFETTI_DOTS = 50;

/**
 * Shows or hides a confetti layer (Confetti.astro). The dots wait in the page's one template, out
 * of the document, until a layer's first celebration: 100 elements fewer for every visit that
 * wins nothing.
 */
export function showConfetti(layer: HTMLElement | null, shown: boolean): void {
  if (!layer) return;
  const dots = document.querySelector<HTMLTemplateElement>("[data-confetti-dots]");
  if (shown && dots && !layer.firstElementChild) layer.append(dots.content.cloneNode(true));
  layer.hidden = !shown;
}

/** Something worth telling the visitor (and a screen reader) about; `id` makes each one new. */
export type WheelNews =
  | { id: number; kind: "spinning" }
  | { id: number; kind: "won"; prize: Prize; totalWins: number }
  | { id: number; kind: "credited"; source: "free" | "purchase"; added: number; spins: number };

export const $spins = atom(STARTING_SPINS);
export const $totalWins = atom(0);
export const $lastPrize = atom<Prize | null>(null);
export const $spinning = atom(false);
export const $celebrating = atom(false);
export const $wheelNews = atom<WheelNews | null>(null);

export interface SpinsOptions {
  random?: RandomSource;
  storage?: SpinsStorage;
  /** Where planPurchased is heard: the window in the browser. */
  events?: EventTarget;
}

let random: RandomSource = () => Math.random();
let stopCurrent: (() => void) | undefined;
let spinTimer: ReturnType<typeof setTimeout> | undefined;
let celebrationTimer: ReturnType<typeof setTimeout> | undefined;
let newsId = 0;

// The prizes and the draw are needed only when a spin ends: they load with the first spin (the
// wheel island has them already), not with the page.
let prizeDraw: Promise<typeof import("../lib/prizeDraw.ts")> | undefined;
function loadPrizeDraw() {
  prizeDraw ??= import("../lib/prizeDraw.ts").catch((error: unknown) => {
    prizeDraw = undefined;
    throw error;
  });
  return prizeDraw;
}

/**
 * Loads the stored count and starts the free-spin timer and the purchase listener. Idempotent:
 * a second call while running changes nothing, so spins are never credited twice.
 */
export function startSpins(options: SpinsOptions = {}): () => void {
  if (stopCurrent) return stopCurrent;
  const { storage = browserStorage(), events = globalThis as unknown as EventTarget } = options;
  random = options.random ?? (() => Math.random());

  $spins.set(readStoredSpins(storage));
  writeStoredSpins(storage, $spins.get());
  const unpersist = $spins.listen((spins) => writeStoredSpins(storage, spins));
  const freeSpins = setInterval(() => credit(1, "free"), FREE_SPIN_INTERVAL_MS);
  const onPurchase = (event: Event) => {
    const spins = purchasedSpins((event as CustomEvent<unknown>).detail);
    if (spins === undefined) return;
    credit(spins, "purchase");
    celebrate();
  };
  events.addEventListener(PLAN_PURCHASED_EVENT, onPurchase);

  stopCurrent = () => {
    unpersist();
    clearInterval(freeSpins);
    clearTimeout(spinTimer);
    clearTimeout(celebrationTimer);
    events.removeEventListener(PLAN_PURCHASED_EVENT, onPurchase);
    stopCurrent = undefined;
    // Back to a fresh page's state, so a test (or a restart) begins clean.
    $spins.set(STARTING_SPINS);
    $totalWins.set(0);
    $lastPrize.set(null);
    $spinning.set(false);
    $celebrating.set(false);
    $wheelNews.set(null);
  };
  return stopCurrent;
}

/**
 * Spends one spin at once and reveals a prize after SPIN_DURATION_MS (or once the draw has loaded,
 * if that takes longer). Returns false, changing nothing, while a spin is under way or when no
 * spins are left (docs/product-behaviour.md#5). A draw that cannot load gives the spin back.
 */
export function spin(): boolean {
  if ($spinning.get() || $spins.get() <= 0) return false;
  $spins.set($spins.get() - 1);
  $spinning.set(true);
  announce({ kind: "spinning" });
  const draw = loadPrizeDraw().then(
    (module) => module.drawPrize,
    (error: unknown) => {
      console.error("The lottery's draw could not load; the spin is given back.", error);
      return undefined;
    },
  );
  spinTimer = setTimeout(() => {
    void draw.then((drawPrize) => {
      if (drawPrize) {
        reveal(drawPrize(random));
      } else {
        $spinning.set(false);
        $spins.set($spins.get() + 1);
      }
    });
  }, SPIN_DURATION_MS);
  return true;
}

function reveal(prize: Prize) {
  $lastPrize.set(prize);
  $totalWins.set($totalWins.get() + 1);
  $spinning.set(false);
  announce({ kind: "won", prize, totalWins: $totalWins.get() });
  if (prize.rarity !== "common") celebrate();
}

function credit(added: number, source: "free" | "purchase") {
  $spins.set($spins.get() + added);
  announce({ kind: "credited", source, added, spins: $spins.get() });
}

/** A new celebration restarts the 3 s rather than stacking another one. */
function celebrate() {
  clearTimeout(celebrationTimer);
  $celebrating.set(true);
  celebrationTimer = setTimeout(() => $celebrating.set(false), CELEBRATION_MS);
}

/** Omit distributed over the union, so each kind keeps its own fields. */
type WithoutId<News> = News extends unknown ? Omit<News, "id"> : never;

function announce(news: WithoutId<WheelNews>) {
  newsId += 1;
  $wheelNews.set({ ...news, id: newsId } as WheelNews);
}
