import { useStore } from "@nanostores/react";
import { useLayoutEffect, useRef, useState } from "react";
import { $toasts, dismissToast, pauseToast, resumeToast, type Toast } from "../stores/toasts.ts";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";

type Edge = "bottom" | "top";

/**
 * The page's one toaster. Its list is server-rendered empty, so the live region exists before the
 * first toast. It sits at the top right, under the sticky header and clear of the chatbot in the
 * bottom corner, and moves to the bottom whenever it would cover the focused element (DESIGN.md 3a).
 */
function Toaster() {
  // Toasts shown before hydration appear right after it; the first render matches the server HTML.
  const toasts = useStore($toasts, { ssr: "initial" });
  const [edge, setEdge] = useState<Edge>("top");
  const regionRef = useRef<HTMLElement>(null);

  useLayoutEffect(() => {
    const moveOffFocus = () => {
      const region = regionRef.current;
      const focused = document.activeElement;
      if (!region || toasts.length === 0 || !focused || focused === document.body || region.contains(focused)) return;
      if (overlaps(region.getBoundingClientRect(), focused.getBoundingClientRect())) {
        setEdge((current) => (current === "bottom" ? "top" : "bottom"));
      }
    };
    moveOffFocus();
    document.addEventListener("focusin", moveOffFocus);
    window.addEventListener("scroll", moveOffFocus, { passive: true });
    return () => {
      document.removeEventListener("focusin", moveOffFocus);
      window.removeEventListener("scroll", moveOffFocus);
    };
  }, [toasts]);

  const alerts = toasts.filter((toast) => toast.variant === "destructive");
  const notices = toasts.filter((toast) => toast.variant !== "destructive");

  // Two live regions that exist before any toast: role="alert" for errors, role="status" for the
  // rest (DESIGN.md 3a). Items carry no role of their own, so each toast is announced once;
  // aria-atomic="false" reads only the toast added, not the whole stack again.
  return (
    <section
      ref={regionRef}
      aria-label="Notifications"
      data-edge={edge}
      className={`pointer-events-none fixed right-0 z-50 w-full max-w-sm p-4 ${edge === "bottom" ? "bottom-20" : "top-16"}`}
    >
      {/* Never display:none, even when empty: a hidden live region would miss its first toast. */}
      <div role="alert" aria-atomic="false" className={`flex flex-col gap-2 ${alerts.length > 0 ? "mb-2" : ""}`}>
        {alerts.map((toast) => (
          <ToastCard key={toast.id} toast={toast} />
        ))}
      </div>
      <div role="status" aria-atomic="false" className="flex flex-col gap-2">
        {notices.map((toast) => (
          <ToastCard key={toast.id} toast={toast} />
        ))}
      </div>
    </section>
  );
}

function ToastCard({ toast }: { toast: Toast }) {
  const destructive = toast.variant === "destructive";
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: hover and focus only pause the toast's timer.
    <div
      data-toast
      data-variant={toast.variant}
      onMouseEnter={() => pauseToast(toast.id)}
      onMouseLeave={() => resumeToast(toast.id)}
      onFocus={() => pauseToast(toast.id)}
      onBlur={() => resumeToast(toast.id)}
      className={`pointer-events-auto relative rounded-xl border p-4 pr-10 shadow-lg text-ink ${
        destructive ? "border-danger bg-[#3a1219]" : "border-void-600 bg-void-700"
      }`}
    >
      <p className="m-0 font-semibold">{toast.title}</p>
      {toast.description && <p className="m-0 mt-1 text-sm text-ink-muted">{toast.description}</p>}
      <button
        type="button"
        aria-label="Dismiss notification"
        onClick={() => dismissToast(toast.id)}
        className="absolute right-2 top-2 grid h-8 w-8 place-items-center rounded-md text-ink-muted hover:text-ink focus-visible:outline-2 focus-visible:outline-accent-strong"
      >
        <span aria-hidden="true">×</span>
      </button>
    </div>
  );
}

function overlaps(a: DOMRect, b: DOMRect) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

export default withErrorBoundary(Toaster);
