import { type ComponentType, useEffect, useRef, useState } from "react";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";
import type { NothingBotPanelProps } from "./NothingBotPanel.tsx";
import { useHydrated } from "./useHydrated.ts";

type Panel = ComponentType<NothingBotPanelProps>;

// The panel (conversation, replies) is fetched on first use, so the page's idle-time JavaScript
// is only this button. Hovering or focusing the button starts the fetch early.
let panelRequest: Promise<Panel> | undefined;
const loadPanel = () => {
  panelRequest ??= import("./NothingBotPanel.tsx").then((module) => module.default);
  return panelRequest;
};

/** The floating "Open NothingBot" button at the bottom right, and the panel it opens. */
function NothingBot() {
  const hydrated = useHydrated();
  const [open, setOpen] = useState(false);
  const [Panel, setPanel] = useState<Panel | null>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);

  // Closing hands focus back to the button that opened the panel.
  useEffect(() => {
    if (wasOpen.current && !open) buttonRef.current?.focus();
    wasOpen.current = open;
  }, [open]);

  const openPanel = () => {
    setOpen(true);
    loadPanel().then(
      (loaded) => setPanel(() => loaded),
      // A chunk that cannot load surfaces through the island's error boundary.
      (error: unknown) =>
        setPanel(() => () => {
          throw error;
        }),
    );
  };

  return (
    <>
      <button
        ref={buttonRef}
        type="button"
        hidden={open}
        disabled={!hydrated}
        aria-haspopup="dialog"
        onClick={openPanel}
        onPointerEnter={loadPanel}
        onFocus={loadPanel}
        className="fixed bottom-4 right-4 z-40 grid h-14 w-14 place-items-center rounded-full bg-accent text-void shadow-lg transition-colors hover:bg-accent-strong focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-accent-strong"
      >
        <span className="sr-only">Open NothingBot</span>
        <svg
          viewBox="0 0 24 24"
          className="h-7 w-7"
          fill="none"
          stroke="currentColor"
          strokeWidth="2"
          aria-hidden="true"
        >
          <path d="M4 5h16v11H9l-5 4z" strokeLinejoin="round" />
          <circle cx="12" cy="10.5" r="2.5" />
        </svg>
      </button>
      {Panel && <Panel open={open} onClose={() => setOpen(false)} />}
    </>
  );
}

export default withErrorBoundary(NothingBot);
