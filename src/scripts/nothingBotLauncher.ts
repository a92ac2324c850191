import type { NothingBotPanelRoot } from "../islands/NothingBot.tsx";
import { showToast } from "../stores/toasts.ts";

type PanelModule = typeof import("../islands/NothingBot.tsx");

let panelModule: Promise<PanelModule> | undefined;

/** Fetches the panel and React once; a failed fetch is forgotten, so the next try fetches again. */
function loadPanel(): Promise<PanelModule> {
  panelModule ??= import("../islands/NothingBot.tsx").catch((error: unknown) => {
    panelModule = undefined;
    throw error;
  });
  return panelModule;
}

/** What the button must never cover. */
const CONTROLS = "a[href],button,input,select,textarea,summary,[tabindex]:not([tabindex='-1'])";

/**
 * `<nothing-bot>`: the floating "Open NothingBot" button, plain HTML from the server. Hovering,
 * focusing or pressing it starts fetching the React panel; a click opens it, and a click made while
 * the panel is still on its way opens it as soon as it arrives. While any control of the page lies
 * under the button it steps aside (`data-aside`: transparent, clicks pass through), unless it has
 * focus. An IntersectionObserver whose root is shrunk to the button's box tells which controls are
 * under it: no work on scroll or per frame, only when a control enters or leaves that box.
 */
export class NothingBotLauncher extends HTMLElement {
  #panel: NothingBotPanelRoot | undefined;

  get #button() {
    return this.querySelector("button[data-nothingbot-open]") as HTMLButtonElement;
  }

  connectedCallback() {
    const button = this.#button;
    const preload = () => void loadPanel().catch(() => {});
    for (const type of ["pointerenter", "pointerdown", "focus"]) button.addEventListener(type, preload);
    button.addEventListener("click", () => void this.open());
    // Disabled in the HTML until now, so a press before this script runs is not silently dropped.
    button.disabled = false;
    this.#stepAsideFromControls(button);
  }

  #stepAsideFromControls(button: HTMLButtonElement) {
    const under = new Set<Element>();
    let observer: IntersectionObserver | undefined;
    const update = () => button.toggleAttribute("data-aside", under.size > 0 && document.activeElement !== button);
    const watch = (root: Element | Document) => {
      if (root instanceof Element && root.matches(CONTROLS) && !this.contains(root)) observer?.observe(root);
      for (const control of root.querySelectorAll(CONTROLS)) if (!this.contains(control)) observer?.observe(control);
    };
    const start = () => {
      const box = button.getBoundingClientRect();
      if (box.width === 0) return;
      observer?.disconnect();
      under.clear();
      const margin = [box.top, innerWidth - box.right, innerHeight - box.bottom, box.left];
      observer = new IntersectionObserver(
        (entries) => {
          for (const entry of entries) under[entry.isIntersecting ? "add" : "delete"](entry.target);
          update();
        },
        { rootMargin: margin.map((edge) => `${-Math.floor(edge)}px`).join(" ") },
      );
      watch(document);
    };
    start();
    // Controls that appear later (a list's first bid, a toast's button) are watched too.
    new MutationObserver((records) => {
      for (const record of records) for (const node of record.addedNodes) if (node instanceof Element) watch(node);
    }).observe(document.body, { childList: true, subtree: true });
    let resizing = 0;
    addEventListener("resize", () => {
      cancelAnimationFrame(resizing);
      resizing = requestAnimationFrame(start);
    });
    button.addEventListener("focus", update);
    button.addEventListener("blur", update);
  }

  async open() {
    const button = this.#button;
    button.hidden = true;
    try {
      const { mountNothingBotPanel } = await loadPanel();
      const host = this.querySelector("[data-nothingbot-panel]") as HTMLElement;
      this.#panel ??= mountNothingBotPanel(host, () => {
        button.hidden = false;
        button.focus();
      });
      this.#panel.open();
    } catch (error) {
      console.error("NothingBot could not load", error);
      button.hidden = false;
      showToast({
        title: "NothingBot didn't load",
        description: "Check your connection and try again.",
        variant: "destructive",
      });
    }
  }
}
