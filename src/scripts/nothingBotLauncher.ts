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

/**
 * `<nothing-bot>`: the floating "Open NothingBot" button, plain HTML from the server. Hovering,
 * focusing or pressing it starts fetching the React panel; a click opens it, and a click made while
 * the panel is still on its way opens it as soon as it arrives.
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
