import {
  NO_PATRONS_TEXT,
  PATRONS_UNAVAILABLE_TEXT,
  parsePatrons,
  type VerifiedPatron,
} from "../lib/verifiedPatrons.ts";

/** A service that answers nothing within this is as good as unreachable. */
const FETCH_TIMEOUT_MS = 10_000;

/** What the page learned from GET /payments/patrons: a 404 means the service takes no payments. */
type PatronsAnswer = VerifiedPatron[] | "off" | null;

/**
 * `<verified-patrons data-src="…">`: fills the Wall of Fame's "Verified Patrons"
 * (VerifiedPatrons.astro) from the service's GET /payments/patrons once the page has loaded. Its
 * section stays hidden while that is under way and for good when payments are off (404): one
 * request tells both. Each patron is a clone of the element's template filled with textContent and
 * attributes: a name is never parsed as HTML.
 */
export class VerifiedPatrons extends HTMLElement {
  connectedCallback() {
    void this.#load();
  }

  async #load() {
    const patrons = await fetchPatrons(this.dataset.src ?? "");
    if (patrons === "off") {
      this.dataset.state = "off";
      return;
    }
    if (patrons === null) this.#say("unavailable", PATRONS_UNAVAILABLE_TEXT);
    else if (patrons.length === 0) this.#say("empty", NO_PATRONS_TEXT);
    else this.#show(patrons);
    (this.closest("section") as HTMLElement).hidden = false;
  }

  #say(state: string, text: string) {
    this.dataset.state = state;
    const message = this.querySelector("[data-patrons-message]") as HTMLElement;
    message.textContent = text;
  }

  #show(patrons: VerifiedPatron[]) {
    const template = this.querySelector("template") as HTMLTemplateElement;
    const rows = patrons.map((patron) => {
      const row = (template.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
      const field = (name: string) => row.querySelector(`[data-patron-${name}]`) as HTMLElement;
      field("name").textContent = patron.name;
      field("total").textContent = `${patron.total} $ZN`;
      // The link's hidden words name whose transaction it is: ten "Latest transaction" links read alike.
      field("of").textContent = ` of ${patron.name}`;
      const link = field("link");
      link.setAttribute("href", patron.explorerUrl);
      link.title = patron.latestSignature;
      return row;
    });
    const list = this.querySelector("[data-patrons-list]") as HTMLElement;
    list.replaceChildren(...rows);
    list.hidden = false;
    (this.querySelector("[data-patrons-message]") as HTMLElement).hidden = true;
    this.dataset.state = "ready";
  }
}

/** The patrons; "off" when the service answers 404; null when it cannot be reached or answers anything else. */
async function fetchPatrons(url: string): Promise<PatronsAnswer> {
  try {
    // No credentials: the list is public, and a cross-origin answer need not allow them.
    const response = await fetch(url, { credentials: "omit", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (response.status === 404) return "off";
    if (!response.ok) return null;
    return parsePatrons(await response.json());
  } catch {
    return null;
  }
}
