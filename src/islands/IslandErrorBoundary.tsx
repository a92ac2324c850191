import { Component, type ComponentType, type ErrorInfo, type ReactNode } from "react";

export const ISLAND_ERROR_TEXT = "Unexpected Application Error!";

interface Props {
  children: ReactNode;
}

/** Contains a rendering error to the island that threw: it shows the spec's text, the page keeps working. */
class IslandErrorBoundary extends Component<Props, { failed: boolean }> {
  state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  componentDidCatch(error: unknown, info: ErrorInfo) {
    console.error(ISLAND_ERROR_TEXT, error, info.componentStack);
  }

  render() {
    if (!this.state.failed) return this.props.children;
    return (
      <div role="alert" className="card border-danger text-center">
        <p className="text-lg font-bold text-danger">{ISLAND_ERROR_TEXT}</p>
      </div>
    );
  }
}

/** Wraps an island's root component so Astro hydrates it inside its own error boundary. */
export function withErrorBoundary<P extends object>(Island: ComponentType<P>) {
  function GuardedIsland(props: P) {
    return (
      <IslandErrorBoundary>
        <Island {...props} />
      </IslandErrorBoundary>
    );
  }
  GuardedIsland.displayName = `Guarded(${Island.displayName ?? Island.name})`;
  return GuardedIsland;
}
