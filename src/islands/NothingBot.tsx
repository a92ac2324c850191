import { createRoot } from "react-dom/client";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";
import NothingBotPanel from "./NothingBotPanel.tsx";

const GuardedPanel = withErrorBoundary(NothingBotPanel);

export interface NothingBotPanelRoot {
  open(): void;
}

/**
 * Renders the NothingBot panel into `container`. The launcher button is plain HTML
 * (NothingBot.astro) and loads this module, with React, on its first hover, focus or press, so the
 * page needs no React for the chatbot until a visitor reaches for it. Closing the panel (Escape or
 * its close button) hides it and calls `onClose`, which hands focus back to the button.
 */
export function mountNothingBotPanel(container: HTMLElement, onClose: () => void): NothingBotPanelRoot {
  const root = createRoot(container);
  const render = (open: boolean) => root.render(<GuardedPanel open={open} onClose={close} />);
  const close = () => {
    render(false);
    onClose();
  };
  return { open: () => render(true) };
}
