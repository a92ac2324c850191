// @vitest-environment happy-dom
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ToastStack } from "../../src/scripts/toaster.ts";
import { $toasts, dismissToast, showToast } from "../../src/stores/toasts.ts";
import { fakeTimersAndNoToastLeft } from "../harness/toastsPerTest.ts";

// The structure Toaster.astro renders (its classes left out): two live regions and a card template.
const MARKUP = `
  <section aria-label="Notifications" data-edge="top">
    <div role="alert" aria-atomic="false"></div>
    <div role="status" aria-atomic="false"></div>
  </section>
  <template>
    <div data-toast>
      <p data-toast-title></p>
      <p data-toast-description></p>
      <a data-toast-action></a>
      <button type="button" aria-label="Dismiss notification" data-toast-dismiss>×</button>
    </div>
  </template>`;

beforeAll(() => customElements.define("toast-stack", ToastStack));

let stack: HTMLElement;
const region = (role: "alert" | "status") => stack.querySelector(`[role="${role}"]`) as HTMLElement;
const titles = (role: "alert" | "status") =>
  [...region(role).querySelectorAll("[data-toast-title]")].map((title) => title.textContent);

fakeTimersAndNoToastLeft();
beforeEach(() => {
  stack = document.createElement("toast-stack");
  stack.innerHTML = MARKUP;
  document.body.append(stack);
});
afterEach(() => {
  document.body.innerHTML = "";
});

describe("<toast-stack>", () => {
  it("shows the newest on top, at most three, and removes each when its time is up", () => {
    for (const title of ["one", "two", "three", "four"]) showToast({ title });
    expect(titles("status")).toEqual(["four", "three", "two"]);
    vi.advanceTimersByTime(5_000);
    expect(region("status").children).toHaveLength(0);
  });

  it("stacks the newest on top across errors and the rest: each card's row is its rank by age", () => {
    showToast({ title: "old error", variant: "destructive" });
    showToast({ title: "older news" });
    showToast({ title: "new error", variant: "destructive" });
    showToast({ title: "newest news" });
    const rowOf = (title: string) =>
      ([...stack.querySelectorAll("[data-toast]")] as HTMLElement[]).find(
        (card) => card.querySelector("[data-toast-title]")?.textContent === title,
      )?.style.gridRow;
    expect(["newest news", "new error", "older news"].map(rowOf)).toEqual(["1", "2", "3"]);
    expect(titles("alert")).toEqual(["new error"]);
    expect(titles("status")).toEqual(["newest news", "older news"]);
    dismissToast(($toasts.get()[0] as { id: number }).id);
    expect(["new error", "older news"].map(rowOf)).toEqual(["1", "2"]);
  });

  it("puts the title and description in separate elements, as text, and no role on the item", () => {
    showToast({ title: "<b>New Bid!</b>", description: "<img src=x onerror=alert(1)> bid $5.00" });
    const card = region("status").querySelector("[data-toast]") as HTMLElement;
    expect(card.querySelector("[data-toast-title]")?.textContent).toBe("<b>New Bid!</b>");
    expect(card.querySelector("[data-toast-description]")?.textContent).toBe("<img src=x onerror=alert(1)> bid $5.00");
    expect(card.querySelector("b, img")).toBeNull();
    expect(card.hasAttribute("role")).toBe(false);
  });

  it("leaves out the description element when there is none", () => {
    showToast({ title: "Copied" });
    expect(region("status").querySelector("[data-toast-description]")).toBeNull();
  });

  it("announces destructive toasts in the alert region, marked for their style", () => {
    showToast({ title: "Bid Failed", variant: "destructive" });
    showToast({ title: "New Bid!" });
    expect(titles("alert")).toEqual(["Bid Failed"]);
    expect(titles("status")).toEqual(["New Bid!"]);
    expect(region("alert").querySelector<HTMLElement>("[data-toast]")?.dataset.variant).toBe("destructive");
  });

  it("shows the toasts raised before it joined the page", () => {
    stack.remove();
    showToast({ title: "early" });
    document.body.append(stack);
    expect(titles("status")).toEqual(["early"]);
  });

  it("keeps the cards already shown in place when a new one arrives", () => {
    showToast({ title: "first" });
    const first = region("status").querySelector("[data-toast]");
    showToast({ title: "second" });
    expect(region("status").lastElementChild).toBe(first);
  });

  it("dismisses a toast with its button", () => {
    showToast({ title: "gone" });
    region("status").querySelector<HTMLButtonElement>("[data-toast-dismiss]")?.click();
    expect(region("status").children).toHaveLength(0);
    expect($toasts.get()).toEqual([]);
  });

  it("holds a toast while hovered or focused and lets the time left run out after", () => {
    showToast({ title: "held" });
    const card = region("status").querySelector("[data-toast]") as HTMLElement;
    vi.advanceTimersByTime(1_000);
    card.dispatchEvent(new MouseEvent("mouseenter"));
    vi.advanceTimersByTime(60_000);
    card.dispatchEvent(new MouseEvent("mouseleave"));
    card.dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
    vi.advanceTimersByTime(60_000);
    expect(titles("status")).toEqual(["held"]);
    card.dispatchEvent(new FocusEvent("focusout", { bubbles: true }));
    vi.advanceTimersByTime(3_999);
    expect(titles("status")).toEqual(["held"]);
    vi.advanceTimersByTime(1);
    expect(titles("status")).toEqual([]);
  });

  it("moves to the other edge when a toast would cover the focused element", () => {
    const input = document.createElement("input");
    document.body.append(input);
    input.focus();
    const section = stack.querySelector("section") as HTMLElement;
    const box = (top: number) => ({ left: 0, right: 100, top, bottom: top + 50 }) as DOMRect;
    section.getBoundingClientRect = () => (section.dataset.edge === "top" ? box(60) : box(600));
    input.getBoundingClientRect = () => box(80);

    showToast({ title: "over the input" });
    expect(section.dataset.edge).toBe("bottom");
    // Clear of it now: a later focus change or scroll leaves it where it is.
    window.dispatchEvent(new Event("scroll"));
    expect(section.dataset.edge).toBe("bottom");
  });

  it("keeps clear of a marked area (the auction's stakes), but of the focused element first", () => {
    const stakes = document.createElement("div");
    stakes.dataset.toastKeepClear = "";
    const input = document.createElement("input");
    document.body.append(stakes, input);
    const section = stack.querySelector("section") as HTMLElement;
    const box = (top: number) => ({ left: 0, right: 100, top, bottom: top + 50 }) as DOMRect;
    section.getBoundingClientRect = () => (section.dataset.edge === "top" ? box(60) : box(600));
    stakes.getBoundingClientRect = () => box(80);
    input.getBoundingClientRect = () => box(620);

    showToast({ title: "over the price" });
    expect(section.dataset.edge).toBe("bottom");
    // Now the focused input is under the bottom edge: covering the price is the lesser harm.
    input.focus();
    expect(section.dataset.edge).toBe("top");
  });

  it("shows only the newest toast while no edge is clear, and the others again once there is room", () => {
    const stakes = document.createElement("div");
    stakes.dataset.toastKeepClear = "";
    document.body.append(stakes);
    const section = stack.querySelector("section") as HTMLElement;
    section.getBoundingClientRect = () => ({ left: 0, right: 100, top: 60, bottom: 300 }) as DOMRect;
    let stakesBox = { left: 0, right: 100, top: 0, bottom: 2_000 };
    stakes.getBoundingClientRect = () => stakesBox as DOMRect;

    showToast({ title: "older" });
    showToast({ title: "newest" });
    const shown = () =>
      [...stack.querySelectorAll<HTMLElement>("[data-toast]")]
        .filter((card) => !card.hidden)
        .map((card) => card.querySelector("[data-toast-title]")?.textContent);
    expect(shown()).toEqual(["newest"]);
    stakesBox = { left: 0, right: 100, top: 1_000, bottom: 1_100 };
    window.dispatchEvent(new Event("scroll"));
    expect(shown().sort()).toEqual(["newest", "older"]);
  });

  it("announces personal news as an alert, with its link, which dismisses the toast", () => {
    showToast({
      title: "You've been outbid by Bo — $2.00",
      variant: "personal",
      action: { label: "Bid again", href: "#place-bid" },
    });
    const card = region("alert").querySelector<HTMLElement>("[data-toast]");
    expect(card?.dataset.variant).toBe("personal");
    const link = card?.querySelector<HTMLAnchorElement>("[data-toast-action]");
    expect(link?.textContent).toBe("Bid again");
    expect(link?.getAttribute("href")).toBe("#place-bid");
    link?.click();
    expect($toasts.get()).toEqual([]);
  });

  it("offers no link when the toast has none", () => {
    showToast({ title: "plain" });
    expect(region("status").querySelector("[data-toast-action]")).toBeNull();
  });
});
