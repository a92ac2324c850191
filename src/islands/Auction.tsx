import { useStore } from "@nanostores/react";
import { type ReactNode, type SubmitEvent, useEffect, useId, useState } from "react";
import {
  BIG_JUMP_FACTOR,
  checkAboveHighest,
  checkBidderName,
  isBigJump,
  nextWinningCents,
  parseAmountInput,
} from "../lib/auction/bidRules.ts";
import {
  BID_FAILED,
  type BidFailureCode,
  bidPlaced,
  bidRefusedToast,
  bidTooLow,
  INVALID_BID,
  INVALID_NAME,
  maximumBelowHighest,
  maximumSet,
  maximumTooLow,
  NAME_REQUIRED,
  OUTBID_BY_MAXIMUM,
} from "../lib/auction/bidToasts.ts";
import { highestToBeat, type RoundPhase, readRound } from "../lib/auction/countdown.ts";
import type { WireBid } from "../lib/auction/protocol.ts";
import { formatCents, formatCount } from "../lib/format.ts";
import { $auction, $typedBidderName, connectAuction, placeBid } from "../stores/auction.ts";
import { BID_FORM_ANCHOR } from "../stores/auctionConnection.ts";
import { $maximum, setMaximum } from "../stores/auctionMaximum.ts";
import type { MaximumState } from "../stores/maximumBid.ts";
import { showToast } from "../stores/toasts.ts";
import { RoundStatus, useRoundClock } from "./AuctionRound.tsx";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";
import { PastWinners } from "./PastWinners.tsx";
import { useHydrated } from "./useHydrated.ts";

/** Recent Bids lists this many, newest first (docs/product-reference.md#9). */
const RECENT_BIDS_SHOWN = 10;

// Hydrate with the server-rendered state, then show the live one: the socket often connects first.
const HYDRATE_FROM_SERVER_HTML = { ssr: "initial" } as const;

/** The form's text fields: one look, and a visible focus ring. */
const FIELD_CLASS =
  "min-h-11 rounded-lg border border-void-600 bg-void px-3 text-ink focus-visible:outline-2 focus-visible:outline-accent-strong";

const STATUS_TEXT = { idle: "Connecting…", connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…" };

function leaderLine(phase: RoundPhase, highest: WireBid | null): string {
  if (!highest) return "No bids yet";
  if (phase === "ended") return `Sold to ${highest.bidderName} for ${formatCents(highest.amountCents)}`;
  return `Leading: ${highest.bidderName}`;
}

interface MoneyFieldProps {
  id: string;
  name: string;
  label: string;
  /** The id of the text that says what the amount means. */
  describedBy: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  children?: ReactNode;
}

/** An amount in pretend dollars: a labelled number field, kept as typed (parseAmountInput reads it). */
function MoneyField({ id, name, label, describedBy, value, onChange, placeholder, children }: MoneyFieldProps) {
  return (
    <div className="flex flex-col gap-1.5">
      <label htmlFor={id} className="text-sm font-semibold">
        {label}
      </label>
      <input
        id={id}
        name={name}
        type="number"
        inputMode="decimal"
        step="0.01"
        min="0"
        placeholder={placeholder}
        aria-describedby={describedBy}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        className={FIELD_CLASS}
      />
      {children}
    </div>
  );
}

/** The owner's line about their maximum (docs/product-behaviour.md#maximum-bids). */
function maximumLine(maximum: MaximumState): string {
  const amount = formatCents(maximum.maximumCents);
  return maximum.leading ? `Your maximum ${amount} — you lead` : `Your maximum ${amount} was outbid`;
}

/** The name typed, checked as a bid's; null after a toast says what is wrong with it. */
function checkedName(typedName: string): string | null {
  const name = typedName.trim() === "" ? null : checkBidderName(typedName);
  if (name?.ok) return name.value;
  showToast(name ? INVALID_NAME : NAME_REQUIRED);
  return null;
}

/** The toast for a bid or maximum the service (or the connection) refused. */
function refusedToast(refusal: { code: BidFailureCode; highestCents?: number | null }, typedName: string) {
  const highestCents = refusal.highestCents === undefined ? currentHighestToBeat() : refusal.highestCents;
  return bidRefusedToast(refusal.code, { typedName, highestCents });
}

/** The highest the form checks a bid against right now, by the service's clock. */
function currentHighestToBeat(): number | null {
  const { round, highest, serviceOffsetMs } = $auction.get();
  return highestToBeat(readRound(round, serviceOffsetMs, performance.now()).phase, highest?.amountCents ?? null);
}

function Auction() {
  const hydrated = useHydrated();
  const { status, bids, highest, bidders, round, pastWinners, serviceOffsetMs, leaderNote } = useStore(
    $auction,
    HYDRATE_FROM_SERVER_HTML,
  );
  const typedName = useStore($typedBidderName, HYDRATE_FROM_SERVER_HTML);
  const [amount, setAmount] = useState("");
  const [placing, setPlacing] = useState(false);
  const maximum = useStore($maximum, HYDRATE_FROM_SERVER_HTML);
  const [maximumAmount, setMaximumAmount] = useState("");
  const [settingMaximum, setSettingMaximum] = useState(false);
  /** A big jump's amount the bidder has been asked to confirm: the next press places it. */
  const [confirming, setConfirming] = useState<number | null>(null);
  const ids = useId();
  const { phase, msLeft } = useRoundClock(round, serviceOffsetMs);
  // Once the round is over, the next bid opens a new one at any amount.
  const highestCents = highestToBeat(phase, highest?.amountCents ?? null);
  // The page-idle script normally connects first; if the island hydrates sooner, this does (once).
  useEffect(() => connectAuction(), []);

  async function submit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    if (placing) return;
    const name = checkedName(typedName);
    if (name === null) return;
    const cents = parseAmountInput(amount);
    if (!cents.ok) return showToast(INVALID_BID);
    // Read now, not at the last render: the round may have run out since.
    const toBeat = currentHighestToBeat();
    if (!checkAboveHighest(cents.value, toBeat).ok) return showToast(bidTooLow(toBeat));
    if (isBigJump(cents.value, toBeat) && confirming !== cents.value) return setConfirming(cents.value);
    setConfirming(null);

    setPlacing(true);
    try {
      const outcome = await placeBid(name, cents.value);
      if (outcome.ok) {
        setAmount("");
        showToast(outcome.outbidByMaximum ? OUTBID_BY_MAXIMUM : bidPlaced(outcome.bid.amountCents));
      } else showToast(refusedToast(outcome, typedName));
    } catch (error) {
      console.error("Auction: placing a bid failed", error);
      showToast(BID_FAILED);
    } finally {
      setPlacing(false);
    }
  }

  async function submitMaximum(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    if (settingMaximum) return;
    const name = checkedName(typedName);
    if (name === null) return;
    const cents = parseAmountInput(maximumAmount);
    if (!cents.ok) return showToast(INVALID_BID);
    const toBeat = currentHighestToBeat();
    if (!checkAboveHighest(cents.value, toBeat).ok) return showToast(maximumBelowHighest(toBeat));
    // Raising one's own maximum only: the service refuses a lower one (maximum_too_low).
    const current = $maximum.get();
    if (current && cents.value <= current.maximumCents) return showToast(maximumTooLow(current.maximumCents));

    setSettingMaximum(true);
    try {
      const outcome = await setMaximum(name, cents.value);
      if (outcome.ok) {
        setMaximumAmount("");
        showToast(maximumSet(outcome.maximumCents));
      } else if (outcome.code === "too_low") showToast(maximumBelowHighest(outcome.highestCents ?? toBeat));
      else showToast(refusedToast(outcome, typedName));
    } catch (error) {
      console.error("Auction: setting a maximum failed", error);
      showToast(BID_FAILED);
    } finally {
      setSettingMaximum(false);
    }
  }

  return (
    <div className="grid gap-6 lg:grid-cols-3">
      <section aria-labelledby={`${ids}-current`} className="card flex flex-col gap-3">
        <div className="flex items-center justify-between gap-2">
          <h3 id={`${ids}-current`} className="text-lg font-bold">
            Current Auction
          </h3>
          <span className="badge bg-accent text-void">
            {formatCount(bidders)} {bidders === 1 ? "Bidder" : "Bidders"}
          </span>
        </div>
        {/* The auction's stakes: toasts keep clear of them (Toaster.astro). */}
        <div data-toast-keep-clear className="flex flex-col gap-3">
          <p className="text-3xl font-black text-gold">{highest ? formatCents(highest.amountCents) : "$0.00"}</p>
          <p className="text-ink-muted">{leaderLine(phase, highest)}</p>
          <RoundStatus phase={phase} msLeft={msLeft} softCloseSeconds={round?.softCloseSeconds ?? 0} />
        </div>
        <p role="status" className="text-sm text-ink-muted empty:hidden">
          {leaderNote === "removed" ? "The leading bid was removed by a moderator" : ""}
        </p>
        <p className="mt-auto flex items-center gap-2 text-sm text-ink-muted" data-connection={status}>
          <span
            aria-hidden="true"
            className={`inline-block h-2.5 w-2.5 rounded-full ${status === "live" ? "bg-live" : "bg-gold"}`}
          />
          {STATUS_TEXT[status]}
        </p>
      </section>

      <section id={BID_FORM_ANCHOR} aria-labelledby={`${ids}-place`} className="card scroll-mt-20">
        <h3 id={`${ids}-place`} className="text-lg font-bold">
          Place Your Bid
        </h3>
        <p id={`${ids}-money`} className="mt-1 text-sm text-ink-muted">
          Pretend dollars: nobody pays, not even the winner.
        </p>
        <form noValidate onSubmit={submit} className="mt-4 flex flex-col gap-4">
          <div className="flex flex-col gap-1.5">
            <label htmlFor={`${ids}-name`} className="text-sm font-semibold">
              Your Name
            </label>
            <input
              id={`${ids}-name`}
              name="bidderName"
              autoComplete="nickname"
              value={typedName}
              onChange={(event) => $typedBidderName.set(event.target.value)}
              className={FIELD_CLASS}
            />
          </div>
          <MoneyField
            id={`${ids}-amount`}
            name="amount"
            label="Bid Amount (pretend $)"
            placeholder={formatCents(nextWinningCents(highestCents))}
            describedBy={`${ids}-money`}
            value={amount}
            onChange={(value) => {
              setAmount(value);
              setConfirming(null);
            }}
          />
          {confirming !== null && (
            <p role="alert" className="rounded-lg border border-gold px-3 py-2 text-sm">
              {formatCents(confirming)} is more than {BIG_JUMP_FACTOR} times the smallest winning bid (
              {formatCents(nextWinningCents(highestCents))}). Pretend money, but everyone sees it: press Place Bid again
              to confirm, or change the amount.
            </p>
          )}
          <button
            type="submit"
            className="btn-primary aria-disabled:cursor-progress aria-disabled:opacity-70"
            disabled={!hydrated}
            // aria-disabled while placing, not disabled: focus stays on the button (submit() ignores repeats).
            aria-disabled={placing}
          >
            {placing ? "Placing Bid..." : "Place Bid"}
          </button>
        </form>
        <form noValidate onSubmit={submitMaximum} className="mt-6 flex flex-col gap-4 border-t border-void-600 pt-4">
          <MoneyField
            id={`${ids}-maximum`}
            name="maximum"
            label="Maximum Bid (pretend $)"
            describedBy={`${ids}-maximum-rule`}
            value={maximumAmount}
            onChange={setMaximumAmount}
          >
            <p id={`${ids}-maximum-rule`} className="text-sm text-ink-muted">
              We bid for you, one step at a time, only as high as it takes to lead and never above your maximum. Nobody
              else sees it.
            </p>
          </MoneyField>
          <p role="status" className="text-sm font-semibold empty:hidden">
            {maximum ? maximumLine(maximum) : ""}
          </p>
          <button
            type="submit"
            className="btn-outline aria-disabled:cursor-progress aria-disabled:opacity-70"
            disabled={!hydrated}
            aria-disabled={settingMaximum}
          >
            {settingMaximum ? "Setting Maximum..." : "Set Maximum"}
          </button>
        </form>
      </section>

      <section aria-labelledby={`${ids}-recent`} className="card">
        <h3 id={`${ids}-recent`} className="text-lg font-bold">
          Recent Bids
        </h3>
        {bids.length === 0 ? (
          <p className="mt-4 text-ink-muted">No bids yet. Be the first to bid on nothing.</p>
        ) : (
          <ol
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable list must be reachable by keyboard.
            tabIndex={0}
            aria-labelledby={`${ids}-recent`}
            className="mt-4 flex max-h-72 list-none flex-col gap-2 overflow-y-auto p-0 focus-visible:outline-2 focus-visible:outline-accent-strong"
          >
            {bids.slice(0, RECENT_BIDS_SHOWN).map((bid) => (
              <li key={bid.id} className="flex items-center justify-between gap-3 rounded-lg bg-void-700 px-3 py-2">
                <span className="min-w-0 truncate">{bid.bidderName}</span>
                <span className="shrink-0 font-mono font-semibold text-gold">{formatCents(bid.amountCents)}</span>
              </li>
            ))}
          </ol>
        )}
      </section>

      <PastWinners winners={pastWinners} roundsOn={(round?.seconds ?? 0) > 0} />
    </div>
  );
}

export default withErrorBoundary(Auction);
