import type { RowField, ServiceListKind } from "../lib/serviceList.ts";

/** A service that answers nothing within this is as good as unreachable. */
const FETCH_TIMEOUT_MS = 10_000;

/** What the page learned from the list's GET: "off" is a 404 where the kind says the feature is off. */
type ListAnswer<Item> = Item[] | "off" | null;

/**
 * `<service-list data-kind="…" data-src="…">` (ServiceList.astro): fills a Wall of Fame list from
 * the service once the page has loaded, one clone of the element's row template per item. The
 * section shows its loading line from the first paint and is hidden only when the answer is that
 * the feature is off. With `data-gate`, the feature's config is asked first and the list only when
 * the feature is on.
 */
export function serviceListElement(kinds: Record<string, ServiceListKind<unknown>>): CustomElementConstructor {
  return class ServiceList extends HTMLElement {
    connectedCallback() {
      const kind = kinds[this.dataset.kind ?? ""];
      if (kind) void this.#load(kind);
    }

    async #load(kind: ServiceListKind<unknown>) {
      const gate = this.dataset.gate;
      const on = gate ? await featureOn(gate) : true;
      const items = on === true ? await fetchList(kind, this.dataset.src ?? "") : on === false ? "off" : null;
      if (items === "off") {
        this.dataset.state = "off";
        (this.closest("section") as HTMLElement).hidden = true;
        return;
      }
      if (items === null) this.#say("unavailable", kind.unavailableText);
      else if (items.length === 0) this.#say("empty", kind.emptyText);
      else this.#show(kind, items);
    }

    #say(state: string, text: string) {
      this.dataset.state = state;
      (this.querySelector("[data-list-message]") as HTMLElement).textContent = text;
    }

    #show(kind: ServiceListKind<unknown>, items: unknown[]) {
      const template = this.querySelector("template") as HTMLTemplateElement;
      const rows = items.map((item) => {
        const row = (template.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
        const field: RowField = (name) => row.querySelector(`[data-field="${name}"]`) as HTMLElement;
        kind.fillRow(item, field);
        return row;
      });
      const list = this.querySelector("[data-list-items]") as HTMLElement;
      list.replaceChildren(...rows);
      list.hidden = false;
      (this.querySelector("[data-list-message]") as HTMLElement).hidden = true;
      this.dataset.state = "ready";
    }
  };
}

/**
 * Whether an optional feature is on, from its config's `enabled` (GET /payments/config answers 200
 * whether payments are on or off); null when the service cannot be reached or answers anything else.
 */
async function featureOn(url: string): Promise<boolean | null> {
  try {
    const response = await fetch(url, { credentials: "omit", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) return null;
    const enabled = ((await response.json()) as { enabled?: unknown } | null)?.enabled;
    return typeof enabled === "boolean" ? enabled : null;
  } catch {
    return null;
  }
}

/** The items; "off" for a 404 where that means off; null when the service cannot be reached or answers anything else. */
async function fetchList<Item>(kind: ServiceListKind<Item>, url: string): Promise<ListAnswer<Item>> {
  try {
    // No credentials: the lists are public, and a cross-origin answer need not allow them.
    const response = await fetch(url, { credentials: "omit", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (response.status === 404 && kind.offWhenNotFound) return "off";
    if (!response.ok) return null;
    return kind.parse(await response.json());
  } catch {
    return null;
  }
}
