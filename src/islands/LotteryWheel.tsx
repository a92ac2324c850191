import { useStore } from "@nanostores/react";
import { useEffect, useRef } from "react";
import { PRIZES } from "../data/prizes.ts";
import { formatCount } from "../lib/format.ts";
import { RARITY_WEIGHTS, totalWeight } from "../lib/prizeDraw.ts";
import { $lastPrize, $spinning, $spins, $totalWins, $wheelNews, spin, type WheelNews } from "../stores/spins.ts";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";
import { PrizeIcon, RARITY_ICON_COLOR, RarityBadge } from "./PrizeVisuals.tsx";
import { useHydrated } from "./useHydrated.ts";

// Hydration renders the atoms' initial values, as the server did; the live values follow at once.
const SSR = { ssr: "initial" } as const;

/** The wheel's slices are sized by each prize's weight, so the picture shows the real odds. */
const SLICE_COLORS = ["void-600", "void-500", "accent", "accent-strong", "gold", "gold-deep"].map(
  (c) => `var(--c-${c})`,
);
const WHEEL_BACKGROUND = (() => {
  const total = totalWeight();
  let from = 0;
  const stops = PRIZES.map((prize, index) => {
    const to = from + (RARITY_WEIGHTS[prize.rarity] / total) * 360;
    const stop = `${SLICE_COLORS[index % SLICE_COLORS.length]} ${from}deg ${to}deg`;
    from = to;
    return stop;
  });
  return `conic-gradient(${stops.join(", ")})`;
})();

const spinsWord = (spins: number) => (spins === 1 ? "spin" : "spins");

/** What the polite live region says about each change, so it is heard as well as seen. */
function describe(news: WheelNews): string {
  switch (news.kind) {
    case "spinning":
      return "Spinning the wheel...";
    case "won":
      return `You won ${news.prize.name} (${news.prize.rarity})! ${news.prize.value}. Total wins: ${formatCount(news.totalWins)}.`;
    case "credited":
      return news.source === "free"
        ? `Free spin! ${formatCount(news.spins)} ${spinsWord(news.spins)} remaining.`
        : `+${formatCount(news.added)} ${spinsWord(news.added)} from your purchase! ${formatCount(news.spins)} ${spinsWord(news.spins)} remaining.`;
  }
}

function LotteryWheel() {
  const hydrated = useHydrated();
  const spins = useStore($spins, SSR);
  const totalWins = useStore($totalWins, SSR);
  const lastPrize = useStore($lastPrize, SSR);
  const spinning = useStore($spinning, SSR);
  const news = useStore($wheelNews, SSR);

  // News from before hydration (a purchase, a free spin) was never on screen here: do not replay it.
  const firstNewsId = useRef<number | null>(null);
  useEffect(() => {
    firstNewsId.current = $wheelNews.get()?.id ?? 0;
  }, []);
  const announcement = news && firstNewsId.current !== null && news.id > firstNewsId.current ? describe(news) : "";

  const outOfSpins = spins <= 0 && !spinning;
  const blocked = spinning || spins <= 0;
  const label = spinning ? "Spinning..." : outOfSpins ? "No Spins Left" : "Spin for Nothing!";

  return (
    <div className="grid gap-6">
      <div className="card relative text-center" data-wheel-card>
        <p className="m-0" data-spin-counter>
          <span className="text-5xl font-black tabular-nums text-accent">{formatCount(spins)}</span>{" "}
          <span className="text-lg font-bold">{spins === 1 ? "Spin Remaining" : "Spins Remaining"}</span>
        </p>

        <div className="relative mx-auto my-6 h-44 w-44 sm:h-52 sm:w-52" aria-hidden="true">
          <span className="absolute left-1/2 top-[-6px] z-10 h-0 w-0 -translate-x-1/2 border-x-[10px] border-t-[16px] border-x-transparent border-t-ink" />
          <div
            className={`h-full w-full rounded-full border-4 border-void-600 shadow-lg ${spinning ? "wheel-spinning motion-safe:animate-wheel-spin" : ""}`}
            style={{ background: WHEEL_BACKGROUND }}
            data-wheel
          />
          <span className="absolute left-1/2 top-1/2 h-10 w-10 -translate-x-1/2 -translate-y-1/2 rounded-full border-4 border-void-600 bg-void" />
        </div>

        <button
          type="button"
          onClick={() => spin()}
          disabled={!hydrated}
          aria-disabled={blocked || undefined}
          className={`w-full ${outOfSpins ? "btn-outline" : "btn-primary"} ${blocked ? "cursor-not-allowed opacity-70" : ""}`}
        >
          {label}
        </button>
        {outOfSpins && (
          <p className="mt-3 text-sm text-ink-muted">
            Out of spins, man.{" "}
            <a href="#products" className="font-semibold text-accent-strong underline underline-offset-2">
              Purchase a Nothing plan below
            </a>{" "}
            for more spins.
          </p>
        )}

        <div className="mt-6 min-h-28 rounded-xl border border-void-600 bg-void-700 p-4" data-wheel-result>
          {spinning ? (
            <p className="m-0 py-6 font-semibold text-ink-muted">The wheel is choosing your nothing...</p>
          ) : lastPrize ? (
            <div className="flex items-center gap-4 text-left">
              <PrizeIcon
                path={lastPrize.icon}
                className={`h-12 w-12 shrink-0 ${RARITY_ICON_COLOR[lastPrize.rarity]}`}
              />
              <div>
                <p className="m-0 text-sm text-ink-muted">You won</p>
                <p className="m-0 text-xl font-extrabold" data-prize-name>
                  {lastPrize.name}
                </p>
                <p className="m-0 mt-1 flex flex-wrap items-center gap-2 text-sm">
                  <RarityBadge rarity={lastPrize.rarity} />
                  <span className="text-ink-muted">{lastPrize.value}</span>
                </p>
              </div>
            </div>
          ) : (
            <p className="m-0 py-6 text-ink-muted">Every spin wins. Every prize is nothing.</p>
          )}
        </div>
        <p role="status" className="sr-only">
          {announcement}
        </p>
      </div>

      <div className="card" data-wheel-stats>
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h3 className="m-0 text-lg font-bold">Lottery Statistics</h3>
          <span className="badge bg-gold text-void">100% Win Rate</span>
        </div>
        <dl className="m-0 mt-4 grid grid-cols-2 gap-4">
          <Stat label="Spins Left" value={formatCount(spins)} />
          <Stat label="Total Wins" value={formatCount(totalWins)} />
          <Stat label="Total Value" value="∞" />
          <Stat label="Items Shipped" value={0} />
        </dl>
      </div>
    </div>
  );
}

function Stat({ label, value }: { label: string; value: number | string }) {
  return (
    <div className="rounded-xl bg-void-700 p-3 text-center">
      <dt className="text-sm text-ink-muted">{label}</dt>
      <dd className="m-0 text-2xl font-black tabular-nums">{value}</dd>
    </div>
  );
}

export default withErrorBoundary(LotteryWheel);
