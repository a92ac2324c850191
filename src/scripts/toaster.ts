import { $toasts, dismissToast, pauseToast, resumeToast, type Toast } from "../stores/toasts.ts";

/**
 * `<toast-stack>`: shows the toasts store in Toaster.astro's two server-rendered live regions.
 * Each toast is a clone of the element's template, filled with textContent (text is never parsed
 * as HTML). A new toast is only ever inserted at the top of its region; the cards already shown are
 * never moved in the DOM, so a screen reader does not hear them again and a focused dismiss button
 * keeps its focus. The two regions overlap on the same grid rows (Toaster.astro): each card's row
 * is its rank by age across both, so the newest is on top whichever region holds it.
 */
export class ToastStack extends HTMLElement {
  #cards = new Map<number, HTMLElement>();
  #unsubscribe: (() => void) | undefined;
  #moveOffFocus = () => this.#keepClear();

  connectedCallback() {
    // In the top layer from now on, empty: over any dialog opened before the first toast's raise.
    this.#region.showPopover?.();
    // subscribe() calls back at once: toasts shown before this script ran appear now.
    this.#unsubscribe = $toasts.subscribe((toasts) => this.#show(toasts));
    document.addEventListener("focusin", this.#moveOffFocus);
    window.addEventListener("scroll", this.#moveOffFocus, { passive: true });
  }

  disconnectedCallback() {
    this.#unsubscribe?.();
    document.removeEventListener("focusin", this.#moveOffFocus);
    window.removeEventListener("scroll", this.#moveOffFocus);
  }

  get #region() {
    return this.querySelector("section") as HTMLElement;
  }

  #show(toasts: readonly Toast[]) {
    const shown = new Set(toasts.map((toast) => toast.id));
    for (const [id, card] of this.#cards) {
      if (shown.has(id)) continue;
      card.remove();
      this.#cards.delete(id);
    }
    // The store lists newest first, and every new toast is newer than those on screen: prepending
    // the new ones, oldest first, leaves the newest on top.
    let added = false;
    for (const toast of [...toasts].reverse()) {
      if (this.#cards.has(toast.id)) continue;
      const card = this.#card(toast);
      this.#cards.set(toast.id, card);
      const role = toast.variant === "default" ? "status" : "alert";
      this.querySelector(`[role="${role}"]`)?.prepend(card);
      added = true;
    }
    toasts.forEach((toast, rank) => {
      const card = this.#cards.get(toast.id);
      if (card) card.style.gridRow = String(rank + 1);
    });
    // A modal dialog opened since is above the stack in the top layer: showing again raises it.
    const region = this.#region;
    if (added && region.hidePopover && document.querySelector("dialog[open]")) {
      region.hidePopover();
      region.showPopover();
    }
    this.#keepClear();
  }

  #card(toast: Toast): HTMLElement {
    const template = this.querySelector("template") as HTMLTemplateElement;
    const card = (template.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
    card.dataset.variant = toast.variant;
    const title = card.querySelector("[data-toast-title]") as HTMLElement;
    title.textContent = toast.title;
    const description = card.querySelector("[data-toast-description]") as HTMLElement;
    if (toast.description) description.textContent = toast.description;
    else description.remove();
    const action = card.querySelector("[data-toast-action]") as HTMLAnchorElement;
    if (toast.action) {
      action.textContent = toast.action.label;
      action.href = toast.action.href;
      action.addEventListener("click", () => dismissToast(toast.id));
    } else action.remove();
    card.querySelector("[data-toast-dismiss]")?.addEventListener("click", () => dismissToast(toast.id));
    // The toast holds while the pointer rests on it or focus is inside it.
    card.addEventListener("mouseenter", () => pauseToast(toast.id));
    card.addEventListener("mouseleave", () => resumeToast(toast.id));
    card.addEventListener("focusin", () => pauseToast(toast.id));
    card.addEventListener("focusout", () => resumeToast(toast.id));
    return card;
  }

  /**
   * Moves the stack to the other edge when it would cover the focused element or an area marked
   * `data-toast-keep-clear` (docs/design.md#3a), and the other edge covers fewer: the focused
   * element counts more than an area. When neither edge is clear, only the newest toast stays on
   * screen (the older ones are back as soon as there is room). Read on a change of toasts, focus or
   * scroll, only while a toast shows.
   */
  #keepClear() {
    if (this.#cards.size === 0) return;
    const region = this.#region;
    const focused = document.activeElement;
    const avoid = [...document.querySelectorAll("[data-toast-keep-clear]")].map((area) => ({
      box: area.getBoundingClientRect() as Box,
      weight: 1,
    }));
    if (focused && focused !== document.body && !region.contains(focused)) {
      avoid.push({ box: focused.getBoundingClientRect(), weight: 2 });
    }
    const cards = [...this.#cards.values()];
    for (const card of cards) card.hidden = false;
    if (this.#place(region, avoid)) return;
    for (const card of cards) card.hidden = card.style.gridRow !== "1";
    this.#place(region, avoid);
  }

  /** Puts the stack at the edge where it covers less; true when it covers nothing there. */
  #place(region: HTMLElement, avoid: { box: Box; weight: number }[]): boolean {
    const here = region.getBoundingClientRect();
    // The same stack at the other edge: top-16 (64 px) or bottom-20 (80 px from the bottom).
    const shift = (innerHeight - 80 - (here.bottom - here.top) - 64) * (region.dataset.edge === "bottom" ? -1 : 1);
    const there = { left: here.left, right: here.right, top: here.top + shift, bottom: here.bottom + shift };
    const cost = (box: Box) => avoid.reduce((sum, area) => sum + (overlaps(box, area.box) ? area.weight : 0), 0);
    const stay = cost(here);
    if (stay === 0) return true;
    const move = cost(there);
    if (move < stay) region.dataset.edge = region.dataset.edge === "bottom" ? "top" : "bottom";
    return move === 0;
  }
}

type Box = Pick<DOMRect, "left" | "right" | "top" | "bottom">;

function overlaps(a: Box, b: Box) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}
