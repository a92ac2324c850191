import { useId } from "react";
import type { WireWinner } from "../lib/auction/protocol.ts";
import { formatShortDateTime } from "../lib/dates.ts";
import { formatCents } from "../lib/format.ts";

/** The last rounds' winners shown, newest first (docs/design.md#6b). */
const PAST_WINNERS_SHOWN = 5;

interface Props {
  winners: WireWinner[];
  /** Rounds are on: with none ended yet, a line says so; with rounds off, no winners shows nothing. */
  roundsOn: boolean;
}

/** Under the three cards of the auction's grid, as wide as all three. */
export function PastWinners({ winners, roundsOn }: Props) {
  const headingId = useId();
  if (winners.length === 0 && !roundsOn) return null;
  return (
    <section aria-labelledby={headingId} className="card lg:col-span-3">
      <h3 id={headingId} className="text-lg font-bold">
        Past winners
      </h3>
      {winners.length === 0 ? (
        <p className="mt-4 text-ink-muted">No round has ended yet. Nobody has won nothing so far.</p>
      ) : (
        <ol aria-labelledby={headingId} className="mt-4 flex list-none flex-col gap-2 p-0">
          {winners.slice(0, PAST_WINNERS_SHOWN).map((winner) => (
            <li
              key={winner.round}
              className="flex flex-wrap items-center gap-x-3 gap-y-1 rounded-lg bg-void-700 px-3 py-2"
            >
              <span className="min-w-0 flex-1 truncate font-semibold">{winner.bid.bidderName}</span>
              <span className="font-mono font-semibold text-gold">{formatCents(winner.bid.amountCents)}</span>
              <time dateTime={winner.endedAt} className="text-sm text-ink-muted">
                {formatShortDateTime(winner.endedAt)}
              </time>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
