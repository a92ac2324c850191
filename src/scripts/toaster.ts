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
  #moveOffFocus = () => this.#keepClearOfFocus();

  connectedCallback() {
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
    for (const toast of [...toasts].reverse()) {
      if (this.#cards.has(toast.id)) continue;
      const card = this.#card(toast);
      this.#cards.set(toast.id, card);
      const role = toast.variant === "destructive" ? "alert" : "status";
      this.querySelector(`[role="${role}"]`)?.prepend(card);
    }
    toasts.forEach((toast, rank) => {
      const card = this.#cards.get(toast.id);
      if (card) card.style.gridRow = String(rank + 1);
    });
    this.#keepClearOfFocus();
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
    card.querySelector("[data-toast-dismiss]")?.addEventListener("click", () => dismissToast(toast.id));
    // The toast holds while the pointer rests on it or focus is inside it.
    card.addEventListener("mouseenter", () => pauseToast(toast.id));
    card.addEventListener("mouseleave", () => resumeToast(toast.id));
    card.addEventListener("focusin", () => pauseToast(toast.id));
    card.addEventListener("focusout", () => resumeToast(toast.id));
    return card;
  }

  /** Moves the stack to the other edge when it covers the focused element (docs/design.md#3a). */
  #keepClearOfFocus() {
    const region = this.#region;
    const focused = document.activeElement;
    if (this.#cards.size === 0 || !focused || focused === document.body || region.contains(focused)) return;
    if (overlaps(region.getBoundingClientRect(), focused.getBoundingClientRect())) {
      region.dataset.edge = region.dataset.edge === "bottom" ? "top" : "bottom";
    }
  }
}

function overlaps(a: DOMRect, b: DOMRect) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}
