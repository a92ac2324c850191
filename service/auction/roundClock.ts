/**
 * Announces every round's end on time from this instance, with or without a new bid (docs/design.md#6b).
 * It keeps a timer for the current round's end, by the database's clock (each settlement says what
 * time the database has, so this process's own clock may be off). When the timer fires it asks the
 * database to settle the round: the first instance to ask records the end and NOTIFYs every
 * instance, which send their pages the auction as it now stands; the others find it recorded. If a
 * soft-close bid moved the end meanwhile, the answer says so and the timer is set again.
 */
import type { Timers } from "../../src/lib/timers.ts";
import { type Logger, loggedError } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { endRepeated, logRepeated } from "../repeatedWarnings.ts";
import type { BidStore, RoundSettlement, RoundStanding } from "../storage/types.ts";

/** Within this long of the end (or past it) the instance's known highest may belong to an ending round. */
const NEAR_END_MS = 1_000;
const SETTLE_RETRY_MS = 1_000;
const SETTLE_FAILED = "settling the auction round failed; retrying";

export interface RoundClock {
  /** Settles the round as it stands now (an end passed while no instance ran) and starts listening. */
  start(): Promise<void>;
  /** True when the round's end is near or past, or recorded: the next bid may open a new round. */
  nearEnd(): boolean;
  /** Counts a round end that a placement of this instance recorded. */
  observeClosedRound(closedRoundBids: number | null): void;
  stop(): void;
}

export interface RoundClockOptions {
  store: BidStore;
  logger: Logger;
  metrics: Metrics;
  timers: Timers;
  /** This process's clock, in ms since the epoch. */
  now?: () => number;
}

export function createRoundClock({ store, logger, metrics, timers, now = Date.now }: RoundClockOptions): RoundClock {
  let round: RoundStanding = { number: 0, endsAt: null, closed: false };
  /** The database's clock minus this process's, from the last settlement. */
  let offsetMs = 0;
  let timer: unknown;
  let settling = false;
  let settleAgain = false;
  let stopped = false;
  const unsubscribes: (() => void)[] = [];

  const databaseNow = () => now() + offsetMs;

  function arm(): void {
    timers.clearTimeout(timer);
    timer = undefined;
    if (stopped || round.closed || round.endsAt === null) return;
    const delay = Math.max(0, Date.parse(round.endsAt) - databaseNow());
    timer = timers.setTimeout(settle, delay);
  }

  function observeClosedRound(closedRoundBids: number | null): void {
    if (closedRoundBids === null) return;
    metrics.roundsClosed.inc();
    metrics.bidsPerRound.observe(closedRoundBids);
  }

  function learn(settlement: RoundSettlement): void {
    offsetMs = Date.parse(settlement.now) - now();
    observeClosedRound(settlement.closedRoundBids);
    // A bid notice heard while the settlement was under way may be newer.
    if (settlement.number >= round.number) {
      round = { number: settlement.number, endsAt: settlement.endsAt, closed: settlement.closed };
    }
    if (settlement.closedRoundBids !== null) logger.info({ round: settlement.number }, "round ended");
  }

  async function settle(): Promise<void> {
    if (stopped) return;
    if (settling) {
      settleAgain = true;
      return;
    }
    settling = true;
    try {
      do {
        settleAgain = false;
        learn(await store.settleRound());
      } while (settleAgain && !stopped);
      endRepeated(logger, SETTLE_FAILED, "the auction round is settled again");
      arm();
    } catch (error) {
      // The database is away: try again shortly (its return also settles, see start()).
      logRepeated(logger, "warn", { err: loggedError(error) }, SETTLE_FAILED);
      timers.clearTimeout(timer);
      if (!stopped) timer = timers.setTimeout(settle, SETTLE_RETRY_MS);
    } finally {
      settling = false;
    }
  }

  return {
    async start() {
      unsubscribes.push(
        store.onBid((notice) => {
          if (notice.round < round.number) return;
          const moved = notice.round !== round.number || notice.endsAt !== round.endsAt || round.closed;
          round = { number: notice.round, endsAt: notice.endsAt, closed: false };
          if (moved) arm();
        }),
        store.onRoundClosed((notice) => {
          if (notice.round < round.number) return;
          round = { ...round, number: notice.round, closed: true };
          arm();
        }),
        store.onReadyChange((ready) => {
          if (ready) void settle();
        }),
      );
      await settle();
    },
    nearEnd() {
      if (round.closed) return true;
      if (round.endsAt === null) return false;
      return Date.parse(round.endsAt) - databaseNow() < NEAR_END_MS;
    },
    observeClosedRound,
    stop() {
      stopped = true;
      timers.clearTimeout(timer);
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
    },
  };
}
