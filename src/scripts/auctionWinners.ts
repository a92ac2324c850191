import { type AuctionWinner, NO_WINNERS_TEXT, parseWinners, WINNERS_UNAVAILABLE_TEXT } from "../lib/auctionWinners.ts";
import { formatShortDateTime } from "../lib/dates.ts";
import { formatCents } from "../lib/format.ts";

/** A service that answers nothing within this is as good as unreachable. */
const FETCH_TIMEOUT_MS = 10_000;

/**
 * `<auction-winners data-src="…">`: fills the Wall of Fame's "Auction Winners" (AuctionWinners.astro)
 * from the service's GET /auction/winners once the page has loaded. The list's space is reserved in
 * the server HTML, so filling it moves nothing. Each winner is a clone of the element's template
 * filled with textContent: a bidder's name is never parsed as HTML.
 */
export class AuctionWinners extends HTMLElement {
  connectedCallback() {
    void this.#load();
  }

  async #load() {
    const winners = await fetchWinners(this.dataset.src ?? "");
    if (winners === null) this.#say("unavailable", WINNERS_UNAVAILABLE_TEXT);
    else if (winners.length === 0) this.#say("empty", NO_WINNERS_TEXT);
    else this.#show(winners);
  }

  #say(state: string, text: string) {
    this.dataset.state = state;
    const message = this.querySelector("[data-winners-message]") as HTMLElement;
    message.textContent = text;
  }

  #show(winners: AuctionWinner[]) {
    const template = this.querySelector("template") as HTMLTemplateElement;
    const rows = winners.map((winner) => {
      const row = (template.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
      const fill = (field: string, text: string) => {
        const node = row.querySelector(`[data-winner-${field}]`) as HTMLElement;
        node.textContent = text;
        return node;
      };
      fill("name", winner.bidderName);
      fill("amount", formatCents(winner.amountCents));
      fill("round", String(winner.round));
      // Date and time, as the auction's "Past winners": with hourly rounds one day has many winners.
      fill("date", formatShortDateTime(winner.endedAt)).setAttribute("datetime", winner.endedAt);
      return row;
    });
    const list = this.querySelector("[data-winners-list]") as HTMLElement;
    list.replaceChildren(...rows);
    list.hidden = false;
    (this.querySelector("[data-winners-message]") as HTMLElement).hidden = true;
    this.dataset.state = "ready";
  }
}

/** The winners, or null when the service cannot be reached or answers anything but the expected JSON. */
async function fetchWinners(url: string): Promise<AuctionWinner[] | null> {
  try {
    // No credentials: the list is public, and a cross-origin answer need not allow them.
    const response = await fetch(url, { credentials: "omit", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) return null;
    return parseWinners(await response.json());
  } catch {
    return null;
  }
}
